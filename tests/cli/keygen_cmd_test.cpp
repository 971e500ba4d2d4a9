// `gantry keygen`: a certificate file of mode 0600 that the overlay reads
// back, and one clear line for what cannot be done.
#include <sys/stat.h>

#include <string>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::test {
namespace {

TEST(Keygen, WritesAPrivateCertificate) {
    ScratchDir dir;
    const std::string path = dir.path() + "/curve.cert";
    expect_gantry({"keygen", path}, "", "", "", 0);
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u);
    const auto lines = lines_of(run_program({"cat", path}).out);
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[0], "# gantry overlay certificate: keep it private (mode 0600)");
    EXPECT_TRUE(lines[1].starts_with("public-key = \"")) << lines[1];
    EXPECT_TRUE(lines[2].starts_with("secret-key = \"")) << lines[2];
}

TEST(Keygen, BadUse) {
    const auto missing = run_gantry({"keygen"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_TRUE(missing.err.starts_with("gantry: keygen: ")) << missing.err;
    expect_gantry({"keygen", "/nonexistent/curve.cert"}, "", "",
                  "gantry: certificate: cannot write \"/nonexistent/curve.cert\": No such file or "
                  "directory\n",
                  1);
}

}  // namespace
}  // namespace gantry::test
