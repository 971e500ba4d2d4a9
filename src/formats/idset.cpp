#include "formats/idset.h"
