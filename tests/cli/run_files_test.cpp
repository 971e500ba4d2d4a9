// Files `gantry run` reads (--input, --rankfile, --env-file) and the names
// it writes (--output templates): refused before any task starts, with the
// file named and the reason the system gives.
#include <string>

#include <gtest/gtest.h>

#include "support/run_command.h"

namespace gantry::test {
namespace {

TEST(RunFiles, AMissingFileIsNamedWithTheReason) {
    expect_gantry({"run", "--input", "/nonexistent/in.txt", "-n", "1", "true"}, "", "",
                  "gantry: run: --input \"/nonexistent/in.txt\": No such file or directory "
                  "(--input takes all, ranks such as 0-3, or a readable file)\n",
                  2);
    expect_gantry({"run", "--rankfile", "/nonexistent/rf", "-n", "1", "true"}, "", "",
                  "gantry: map-by: rankfile \"/nonexistent/rf\": No such file or directory\n", 2);
    expect_gantry({"run", "--env-file", "/nonexistent/env", "-n", "1", "true"}, "", "",
                  "gantry: run: --env-file \"/nonexistent/env\": No such file or directory\n", 2);
}

TEST(RunFiles, ADirectoryIsNoFile) {
    expect_gantry({"run", "--input", "/", "-n", "1", "true"}, "", "",
                  "gantry: run: --input \"/\": Is a directory (--input takes all, ranks such as "
                  "0-3, or a readable file)\n",
                  2);
    expect_gantry({"run", "--env-file", "/", "-n", "1", "true"}, "", "",
                  "gantry: run: --env-file \"/\": Is a directory\n", 2);
}

TEST(RunFiles, AnUnknownTemplateNameIsRefusedAtOnce) {
    expect_gantry({"run", "-o", "out.{{bogus}}", "-n", "1", "true"}, "", "",
                  "gantry: run: --output: unknown {{bogus}} (known: {{id}}, {{taskid}}, {{node}}) "
                  "in \"out.{{bogus}}\"\n",
                  2);
    expect_gantry({"run", "--error", "/nonexistent/{{tasid}}.err", "-n", "1", "true"}, "", "",
                  "gantry: run: --error: unknown {{tasid}} (known: {{id}}, {{taskid}}, {{node}}) "
                  "in \"/nonexistent/{{tasid}}.err\"\n",
                  2);
}

}  // namespace
}  // namespace gantry::test
