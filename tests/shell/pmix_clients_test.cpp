#include "shell/pmix_clients.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/scratch.h"

namespace gantry::shell {
namespace {

// Debian's own programs: what each links decides.
TEST(PmixClients, ByWhatTheProgramLinks) {
    EXPECT_FALSE(may_be_pmix_client("/usr/bin/true"));          // libc only
    EXPECT_FALSE(may_be_pmix_client("/usr/bin/mpichversion"));  // MPICH: PMI-1
    EXPECT_TRUE(may_be_pmix_client("/usr/bin/ompi_info"));      // Open MPI
    // This program links PMIx as gantry does, as a server.
    EXPECT_FALSE(may_be_pmix_client("/proc/self/exe"));
}

TEST(PmixClients, ScriptsInterpretersAndUnreadableFiles) {
    EXPECT_TRUE(may_be_pmix_client("/usr/bin/python3"));
    EXPECT_TRUE(may_be_pmix_client("/usr/bin/perl"));
    EXPECT_TRUE(may_be_pmix_client("/bin/sh"));
    EXPECT_TRUE(may_be_pmix_client("/usr/bin/env"));
    EXPECT_FALSE(may_be_pmix_client("/usr/bin/printenv"));
    EXPECT_TRUE(may_be_pmix_client("/no/such/program"));
    const test::ScratchDir scratch("gantry-pmix-clients");
    std::ofstream(scratch / "run.sh") << "#!/bin/sh\nexec ./app\n";
    std::ofstream(scratch / "empty").flush();
    EXPECT_TRUE(may_be_pmix_client(scratch / "run.sh"));
    EXPECT_TRUE(may_be_pmix_client(scratch / "empty"));
}

}  // namespace
}  // namespace gantry::shell
