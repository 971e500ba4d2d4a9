#include "cli/command.h"

namespace gantry::cli {

int hostlist_main(int, char**) { return fail("hostlist", "not built yet"); }

}  // namespace gantry::cli
