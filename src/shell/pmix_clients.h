// Which programs get a PMIx server by default. Starting one costs a job a
// few milliseconds, more than the rest of `gantry run true`, so a job whose
// programs cannot speak PMIx goes without (docs/pmi.md, "Which interface").
#pragma once

#include <string>

namespace gantry::shell {

// Whether the program at `path` may be a PMIx client: a script or a
// program that runs others (a shell, a wrapper such as env, numactl,
// valgrind or apptainer, by name), an interpreter that can load an MPI
// library at run time (python, perl, ruby, julia, R, node, by name), or an
// ELF executable that links PMIx or Open MPI (libpmix, libmpi.so.40 and
// later, libopen-pal, libopen-rte, liboshmem). Not: an ELF executable that
// links none of them, MPICH's libmpi.so.12 included, and gantry itself. A
// file that cannot be read: true.
bool may_be_pmix_client(const std::string& path);

}  // namespace gantry::shell
