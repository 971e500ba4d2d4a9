#include "cli/command.h"

namespace gantry::cli {

int rset_main(int, char**) { return fail("rset", "not built yet"); }

}  // namespace gantry::cli
