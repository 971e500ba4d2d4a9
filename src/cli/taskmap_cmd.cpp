#include "cli/command.h"

namespace gantry::cli {

int taskmap_main(int, char**) { return fail("taskmap", "not built yet"); }

}  // namespace gantry::cli
