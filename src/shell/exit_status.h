// A task's end as the job reports it: an exit code and the words of the
// summary line.
#pragma once

#include <string>

namespace gantry::shell {

// The exit code of a wait status: the task's own, or 128+N when signal N
// killed it.
int exit_code_of(int wait_status);

// "exited with exit code 5" or "killed by signal 11 (Segmentation fault)".
std::string describe_end(int wait_status);

}  // namespace gantry::shell
