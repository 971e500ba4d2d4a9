#include "shell/environment.h"

#include <gtest/gtest.h>

#include "support/vectors.h"

namespace gantry::shell {
namespace {

using Entries = std::vector<std::string>;

Environment origin() {
    return Environment::from_entries({"HOME=/home/u", "PATH=/bin", "OMP_X=1", "OMP_Y=2"});
}

Entries applied(const std::vector<EnvRule>& rules) {
    Environment env = origin();
    for (const EnvRule& rule : rules)
        EXPECT_TRUE(apply_rule(env, rule, origin()).ok()) << rule.text;
    return env.entries();
}

std::string error_of(const EnvRule& rule) {
    Environment env = origin();
    const Status status = apply_rule(env, rule, origin());
    return status.ok() ? "ok" : status.error().str();
}

TEST(Environment, EntriesAreSortedAndIgnoreTextWithoutEquals) {
    EXPECT_EQ(Environment::from_entries({"B=2", "A=1", "junk", "C="}).entries(),
              (Entries{"A=1", "B=2", "C="}));
}

TEST(Environment, InheritedIsThisProcesssEnvironment) {
    setenv("GANTRY_TEST_VARIABLE", "a=b c", 1);
    EXPECT_EQ(Environment::inherited().get("GANTRY_TEST_VARIABLE"), "a=b c");
}

TEST(Environment, RulesApplyInOrder) {
    using K = EnvRule::Kind;
    EXPECT_EQ(applied({{K::kSet, "A=1"}, {K::kSet, "A=2=3"}}),
              (Entries{"A=2=3", "HOME=/home/u", "OMP_X=1", "OMP_Y=2", "PATH=/bin"}));
    EXPECT_EQ(applied({{K::kRemove, "OMP_*"}}), (Entries{"HOME=/home/u", "PATH=/bin"}));
    // Remove everything, then bring back one variable by name, as with flux.
    EXPECT_EQ(applied({{K::kRemove, "*"}, {K::kSet, "PATH"}, {K::kSet, "NOPE"}}),
              (Entries{"PATH=/bin"}));
    EXPECT_EQ(applied({{K::kSet, "OMP_X=9"}, {K::kRemove, "OMP_?"}, {K::kSet, "E="}}),
              (Entries{"E=", "HOME=/home/u", "PATH=/bin"}));
}

TEST(Environment, FileRules) {
    const std::string path =
        test::write_temp_file("env-file", "# settings\n\nA=1\nB=x y\nHOME=/tmp\n");
    EXPECT_EQ(applied({{EnvRule::Kind::kFile, path}}),
              (Entries{"A=1", "B=x y", "HOME=/tmp", "OMP_X=1", "OMP_Y=2", "PATH=/bin"}));
    const std::string bad = test::write_temp_file("env-file-bad", "A=1\n\nfoo\n");
    EXPECT_EQ(error_of({EnvRule::Kind::kFile, bad}),
              "run: --env-file: line 3 of \"" + bad + "\": no '=' in \"foo\"");
    const std::string bad_name = test::write_temp_file("env-file-name", "1A=1\n");
    EXPECT_EQ(
        error_of({EnvRule::Kind::kFile, bad_name}),
        "run: --env-file: line 1 of \"" + bad_name + "\": bad variable name \"1A\" in \"1A=1\"");
    EXPECT_EQ(error_of({EnvRule::Kind::kFile, "/nonexistent/env"}),
              "run: --env-file \"/nonexistent/env\": No such file or directory");
    EXPECT_EQ(error_of({EnvRule::Kind::kFile, "/"}), "run: --env-file \"/\": Is a directory");
}

TEST(Environment, BadNames) {
    EXPECT_EQ(error_of({EnvRule::Kind::kSet, "=1"}),
              "run: --env: bad variable name \"\" in \"=1\"");
    EXPECT_EQ(error_of({EnvRule::Kind::kSet, "A-B=1"}),
              "run: --env: bad variable name \"A-B\" in \"A-B=1\"");
    EXPECT_EQ(error_of({EnvRule::Kind::kSet, "_a9=1"}), "ok");
}

TEST(Environment, TaskVariables) {
    // An outer launcher's PMI variables (a Slurm step's PMI_JOBID, hydra's
    // PMI_PORT and PMI_ID, a PMIx server's) do not reach the task.
    Environment env = Environment::from_entries(
        {"PMI_RANK=99", "KEEP=1", "PMI_JOBID=7.0", "PMI_PORT=vm:4000", "PMI_ID=3",
         "PMIX_NAMESPACE=outer", "PMIX_SERVER_URI=pmix-server.1;tcp4://127.0.0.1:9"});
    set_task_variables(
        env, TaskPlace{"f1", 6, 2, 4, 1, 3, 1, 1, 2, "{\"version\":1,\"map\":[[0,2,3,1]]}", {}});
    EXPECT_EQ(env.entries(),
              (Entries{"GANTRY_APP_INDEX=1", "GANTRY_APP_RANK=2", "GANTRY_JOB_ID=f1",
                       "GANTRY_JOB_NNODES=2", "GANTRY_JOB_SIZE=6", "GANTRY_NODE_ID=1",
                       "GANTRY_TASK_LOCAL_RANK=1", "GANTRY_TASK_LOCAL_SIZE=3",
                       "GANTRY_TASK_MAP={\"version\":1,\"map\":[[0,2,3,1]]}", "GANTRY_TASK_RANK=4",
                       "KEEP=1", "MPI_LOCALNRANKS=3", "MPI_LOCALRANKID=1", "PMI_RANK=4",
                       "PMI_SIZE=6", "PMI_SPAWNED=0"}));
    Environment gpu;
    set_task_variables(gpu, TaskPlace{"f1", 1, 1, 0, 0, 1, 0, 0, 0, "", {2, 3}});
    EXPECT_EQ(gpu.get("CUDA_VISIBLE_DEVICES"), "2,3");
    EXPECT_EQ(gpu.get("ROCR_VISIBLE_DEVICES"), "2,3");
}

}  // namespace
}  // namespace gantry::shell
