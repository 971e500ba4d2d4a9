#include "cli/command.h"

namespace gantry::cli {

int idset_main(int, char**) { return fail("idset", "not built yet"); }

}  // namespace gantry::cli
