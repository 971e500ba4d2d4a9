// A jobspec's launch options as the shell takes them (launch_settings), and
// one node's share of its job (node_job, and local_job for this machine's):
// exact settings, paths taken
// from attributes.cwd, tasks starting from attributes.environment, and
// `gantry run`'s messages for bad values.
#include "shell/plan_job.h"

#include <sys/resource.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "mapper/jobspec_map.h"
#include "shell/map_io.h"
#include "support/scratch.h"
#include "topo/topology.h"

namespace gantry::shell {
namespace {

const Topology& machine() {
    static const Topology topology = *Topology::from_synthetic("package:1 core:4 pu:1");
    return topology;
}

// A directory of its own, with a subdirectory and an env file, as a front
// end's attributes.cwd; removed when the program exits.
std::filesystem::path job_directory() {
    static const test::ScratchDir scratch("gantry-plan-job-test");
    const std::filesystem::path dir = scratch.path();
    std::filesystem::create_directories(dir / "sub");
    std::ofstream(dir / "b.env") << "B=2\n";
    std::ofstream(dir / "input.txt") << "data\n";
    return dir;
}

Jobspec::App app(std::vector<std::string> command, std::uint32_t ntasks) {
    Jobspec::App a;
    a.command = std::move(command);
    a.ntasks = ntasks;
    return a;
}

// Two apps of two tasks each on this machine (named as it is, so local).
Jobspec two_apps() {
    Jobspec spec;
    spec.apps = {app({"./a", "x"}, 2), app({"./b"}, 2)};
    spec.job.hosts = local_hostname() + ":4";
    spec.attributes.cwd = job_directory().string();
    return spec;
}

// `spec` mapped as `gantry run` maps it here, every node a machine().
JobMap map_of(const Jobspec& spec) {
    MapInputs inputs = read_map_inputs(spec);
    inputs.topology = machine();
    return map_jobspec(spec, inputs).value();
}

std::string error_of(const Jobspec& spec) {
    const auto settings = launch_settings(spec, map_of(spec), "7");
    return settings ? "no error" : settings.error().str();
}

TEST(LaunchSettings, FromTheJobspec) {
    using Kind = Jobspec::EnvRule::Kind;
    Jobspec spec = two_apps();
    spec.apps[0].env = {{Kind::kSet, "A=1"}, {Kind::kRemove, "X*"}};
    spec.apps[1].env = {{Kind::kFile, "b.env"}};
    spec.apps[1].cwd = "sub";
    Jobspec::Attributes& attributes = spec.attributes;
    attributes.label_io = true;
    attributes.unbuffered = true;
    attributes.output = "out.{{taskid}}";
    attributes.error = "/var/err";
    attributes.input = "1,3";
    attributes.time_limit = 1.5;
    attributes.kill_timeout = 2;
    attributes.kill_on_bad_exit = true;
    attributes.rlimits = {"core=0,nofile=4096", "stack=unlimited"};
    attributes.umask = "027";

    const auto settings = launch_settings(spec, map_of(spec), "7");
    ASSERT_TRUE(settings) << settings.error().str();
    const std::string dir = attributes.cwd;
    EXPECT_EQ(settings->job_id, "7");
    EXPECT_EQ(settings->env_rules,
              (std::vector<EnvRule>{{EnvRule::Kind::kSet, "A=1"}, {EnvRule::Kind::kRemove, "X*"}}));
    EXPECT_EQ(settings->cwd, dir);
    ASSERT_EQ(settings->apps.size(), 2u);
    EXPECT_EQ(settings->apps[0].env_rules, std::vector<EnvRule>{});
    EXPECT_EQ(settings->apps[0].cwd, "");
    EXPECT_EQ(settings->apps[1].env_rules,
              (std::vector<EnvRule>{{EnvRule::Kind::kFile, dir + "/b.env"}}));
    EXPECT_EQ(settings->apps[1].cwd, dir + "/sub");
    EXPECT_EQ(settings->input.source, Input::Source::kStdin);
    EXPECT_EQ(settings->input.ranks, *IdSet::parse("1,3"));
    EXPECT_TRUE(settings->output.label);
    EXPECT_TRUE(settings->output.unbuffered);
    EXPECT_EQ(settings->output.output_template, dir + "/out.{{taskid}}");
    EXPECT_EQ(settings->output.error_template, "/var/err");
    EXPECT_EQ(settings->limits.time_limit, std::chrono::milliseconds(1500));
    EXPECT_EQ(settings->limits.kill_timeout, std::chrono::milliseconds(2000));
    EXPECT_TRUE(settings->limits.kill_on_bad_exit);
    EXPECT_EQ(settings->soft_limits,
              (std::vector<std::pair<int, rlim_t>>{
                  {RLIMIT_CORE, 0}, {RLIMIT_NOFILE, 4096}, {RLIMIT_STACK, RLIM_INFINITY}}));
    EXPECT_EQ(settings->umask, std::optional<mode_t>(027));
}

TEST(LaunchSettings, Defaults) {
    Jobspec spec = two_apps();
    const auto settings = launch_settings(spec, map_of(spec), "7");
    ASSERT_TRUE(settings) << settings.error().str();
    EXPECT_EQ(settings->input.source, Input::Source::kStdin);
    EXPECT_EQ(settings->input.ranks, IdSet{0});
    EXPECT_EQ(settings->output.output_template, "");
    EXPECT_EQ(settings->limits.time_limit, std::chrono::milliseconds(0));
    EXPECT_EQ(settings->limits.kill_timeout, std::chrono::milliseconds(5000));
    EXPECT_EQ(settings->soft_limits.size(), 0u);
    EXPECT_EQ(settings->umask, std::nullopt);
}

TEST(LaunchSettings, InputOfAllRanksOrAFile) {
    Jobspec spec = two_apps();
    spec.attributes.input = "all";
    auto settings = launch_settings(spec, map_of(spec), "7");
    ASSERT_TRUE(settings);
    EXPECT_EQ(settings->input.ranks, IdSet::range(0, 3));
    spec.attributes.input = "input.txt";
    settings = launch_settings(spec, map_of(spec), "7");
    ASSERT_TRUE(settings) << settings.error().str();
    EXPECT_EQ(settings->input.source, Input::Source::kFile);
    EXPECT_EQ(settings->input.file, spec.attributes.cwd + "/input.txt");
}

TEST(LaunchSettings, BadValuesGiveRunsMessages) {
    struct Case {
        void (*edit)(Jobspec&);
        const char* error;
    };
    const Case kCases[] = {
        {[](Jobspec& s) { s.apps[1].cwd = "/nonexistent"; },
         "run: --cwd: no such directory in \"/nonexistent\""},
        {[](Jobspec& s) { s.apps[0].cwd = "no-such-sub"; },
         "run: --cwd: no such directory in \"no-such-sub\""},
        {[](Jobspec& s) { s.attributes.input = "4"; },
         "run: --input: the job's ranks are 0-3 in \"4\""},
        {[](Jobspec& s) { s.attributes.input = "no-such-file"; },
         "run: --input \"no-such-file\": No such file or directory (--input takes all, ranks "
         "such as 0-3, or a readable file)"},
        {[](Jobspec& s) {
             s.attributes.rlimits = {"core=0", "cores=1"};
         },
         "run: --rlimit: unknown limit \"cores\" (core, nofile, stack, cpu, as, ...) in "
         "\"cores=1\""},
        {[](Jobspec& s) { s.attributes.rlimits = {"nofile=-1"}; },
         "run: --rlimit: nofile needs a number or unlimited in \"nofile=-1\""},
        {[](Jobspec& s) { s.attributes.umask = "9"; },
         "run: --umask takes an octal mask such as 022 in \"9\""},
    };
    for (const Case& c : kCases) {
        Jobspec spec = two_apps();
        c.edit(spec);
        EXPECT_EQ(error_of(spec), c.error);
    }
}

std::vector<std::string> task_env(const Job& job, std::size_t task) {
    return job.tasks.at(task).env;
}

bool has(const std::vector<std::string>& env, const std::string& entry) {
    return std::find(env.begin(), env.end(), entry) != env.end();
}

bool has_name(const std::vector<std::string>& env, const std::string& name) {
    return std::any_of(env.begin(), env.end(),
                       [&](const std::string& e) { return e.starts_with(name + "="); });
}

// The tasks start from the jobspec's environment, not this process's.
TEST(LocalJob, TasksStartFromTheJobspecsEnvironment) {
    using Kind = Jobspec::EnvRule::Kind;
    Jobspec spec = two_apps();
    spec.attributes.environment = {{"HOME", "/home/u"}, {"KEEP", "k"}, {"XDROP", "x"}};
    spec.apps[0].env = {{Kind::kRemove, "X*"}, {Kind::kSet, "COPIED=1"}};
    spec.apps[1].env = {{Kind::kFile, "b.env"}};
    spec.apps[1].cwd = "sub";
    const JobMap map = map_of(spec);
    const auto settings = launch_settings(spec, map, "7");
    ASSERT_TRUE(settings) << settings.error().str();
    std::string warning;
    const auto job = local_job(spec, map, *settings, warning);
    ASSERT_TRUE(job) << job.error().str();
    EXPECT_EQ(warning, "");
    EXPECT_EQ(job->id, "7");
    EXPECT_EQ(job->hostname, local_hostname());
    EXPECT_EQ(job->app_commands, (std::vector<std::string>{"./a x", "./b"}));
    EXPECT_EQ(job->pmi.kvsname, "gantry_7");
    ASSERT_EQ(job->tasks.size(), 4u);
    EXPECT_EQ(job->tasks[0].argv, (std::vector<std::string>{"./a", "x"}));
    EXPECT_EQ(job->tasks[2].argv, (std::vector<std::string>{"./b"}));
    EXPECT_EQ(job->tasks[0].cwd, spec.attributes.cwd);
    EXPECT_EQ(job->tasks[2].cwd, spec.attributes.cwd + "/sub");
    for (std::size_t task = 0; task < 4; ++task) {
        const auto env = task_env(*job, task);
        EXPECT_TRUE(has(env, "HOME=/home/u"));
        EXPECT_TRUE(has(env, "KEEP=k"));
        EXPECT_TRUE(has(env, "COPIED=1"));
        EXPECT_FALSE(has_name(env, "XDROP"));
        EXPECT_FALSE(has_name(env, "PATH")) << "this process's environment leaked in";
        EXPECT_EQ(has(env, "B=2"), task >= 2) << task;
    }
}

TEST(LocalJob, NoTaskHere) {
    Jobspec spec = two_apps();
    spec.job.hosts = "gantry-elsewhere:4";
    const JobMap map = map_of(spec);
    const auto settings = launch_settings(spec, map, "7");
    ASSERT_TRUE(settings);
    std::string warning;
    const auto job = local_job(spec, map, *settings, warning);
    ASSERT_FALSE(job);
    EXPECT_EQ(job.error().str(),
              "run: no task of the job is mapped to this machine (" + local_hostname() + ")");
}

// A job shell under an instance runs the node of its rank, whatever the
// nodes are named: only that node's tasks, in rank order.
TEST(NodeJob, OnlyThatNodesTasks) {
    Jobspec spec = two_apps();
    spec.job.hosts = "n0:1,n1:3";
    const JobMap map = map_of(spec);
    const auto settings = launch_settings(spec, map, "7");
    ASSERT_TRUE(settings) << settings.error().str();
    std::string warning;
    const auto job = node_job(spec, map, 1, *settings, warning);
    ASSERT_TRUE(job) << job.error().str();
    EXPECT_EQ(job->hostname, "n1");
    std::vector<std::uint32_t> ranks;
    for (const Task& task : job->tasks)
        ranks.push_back(task.rank);
    EXPECT_EQ(ranks, (std::vector<std::uint32_t>{1, 2, 3}));
    EXPECT_EQ(job->tasks[0].argv, (std::vector<std::string>{"./a", "x"}));
    EXPECT_EQ(job->tasks[1].argv, (std::vector<std::string>{"./b"}));

    spec.apps = {app({"./a"}, 1)};
    const JobMap one = map_of(spec);
    // A node of the job with no task runs none.
    const auto none = node_job(spec, one, 1, *settings, warning);
    ASSERT_TRUE(none) << none.error().str();
    EXPECT_EQ(none->hostname, "n1");
    EXPECT_TRUE(none->tasks.empty());
    EXPECT_EQ(node_job(spec, one, 2, *settings, warning).error().str(),
              "run: the job has no node 2");
}

TEST(EnvironmentMap, RoundTrip) {
    const std::map<std::string, std::string> variables = {{"A", "1"}, {"B", ""}};
    const Environment env = Environment::from_map(variables);
    EXPECT_EQ(env.entries(), (std::vector<std::string>{"A=1", "B="}));
    EXPECT_EQ(env.to_map(), variables);
}

}  // namespace
}  // namespace gantry::shell
