#include "formats/hostlist.h"
