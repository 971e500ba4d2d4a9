// The command line of `gantry run` and `gantry submit` read into a jobspec:
// exact encodings for MPMD and scheduling options, what the front end adds
// (its directory, environment, a default name), and the messages.
#include "cli/run_options.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "support/vectors.h"

namespace gantry::cli {
namespace {

Result<RunCommand> parse(std::string_view command, std::vector<std::string> args) {
    args.insert(args.begin(), std::string(command));
    std::vector<char*> argv;
    for (std::string& arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    return parse_run_command(command, static_cast<int>(args.size()), argv.data());
}

// The jobspec without what comes from the process (its directory and
// environment), once those are checked: the rest is the command line's.
std::string encoding(const Result<RunCommand>& run) {
    if (!run)
        return run.error().str();
    Jobspec spec = run->jobspec;
    EXPECT_EQ(spec.attributes.cwd, std::filesystem::current_path().string());
    EXPECT_EQ(spec.attributes.environment.at("PATH"), std::getenv("PATH"));
    spec.attributes.cwd.clear();
    spec.attributes.environment.clear();
    return spec.encode();
}

double now_in_seconds() {
    using std::chrono::duration;
    return duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(ParseRunCommand, MpmdCommandLine) {
    const auto run = parse("submit", {"--display", "map",      "-H",         "n0:4,n1:4",
                                      "-t",        "10m",      "--label-io", "--rlimit",
                                      "core=0",    "-n",       "2",          "--map-by",
                                      "core",      "--env",    "A=1",        "--env-remove",
                                      "X*",        "./bin/a",  "x",          ":",
                                      "-n",        "4",        "--map-by",   "package",
                                      "-H",        "+n1",      "--env-file", "b.env",
                                      "--cwd",     "/scratch", "./b"});
    EXPECT_EQ(
        encoding(run),
        R"({"version":1,"apps":[{"command":["./bin/a","x"],"ntasks":2,"map_by":"core","rank_by":"",)"
        R"("bind_to":"","hosts":"","hostfile":"","env":[{"set":"A=1"},{"remove":"X*"}],"cwd":""},)"
        R"({"command":["./b"],"ntasks":4,"map_by":"package","rank_by":"","bind_to":"","hosts":"+n1",)"
        R"("hostfile":"","env":[{"file":"b.env"}],"cwd":"/scratch"}],)"
        R"("job":{"hosts":"n0:4,n1:4","hostfile":"","rankfile":"","topology":"",)"
        R"("oversubscribe":false,"nolocal":false,"hwthread_cpus":false,"display":["map"]},)"
        R"("resources":{"nodes":0,"ntasks":0,"cores_per_task":1,"gpus_per_task":0,)"
        R"("exclusive":false,"constraint":{},"R":null},)"
        R"("attributes":{"name":"a","cwd":"","environment":{},"time_limit":600,"kill_timeout":5,)"
        R"("kill_on_bad_exit":false,"urgency":16,"begin_time":0,"dependencies":[],)"
        R"("label_io":true,"output":"","error":"","input":"","unbuffered":false,)"
        R"("timestamp_output":false,"output_dir":"","merge_stderr":false,)"
        R"("rlimits":["core=0"],"umask":"","mpi":""}})");
    ASSERT_TRUE(run);
    EXPECT_FALSE(run->dry_run);
    EXPECT_FALSE(run->help);
    EXPECT_TRUE(run->scheduling_options.empty());
}

TEST(ParseRunCommand, SchedulingOptions) {
    const double before = now_in_seconds();
    auto run =
        parse("submit",
              {"-N", "2", "-c", "4", "--exclusive", "--urgency", "31", "--dependency",
               "afterok:3,afterany:4", "--begin-time", "+1m", "--gpus-per-task=1", "--dependency",
               "afternotok:18446744073709551615", "--job-name", "sim", "-n", "8", "./x"});
    const double after = now_in_seconds();
    ASSERT_TRUE(run) << run.error().str();
    EXPECT_GE(run->jobspec.attributes.begin_time, before + 60);
    EXPECT_LE(run->jobspec.attributes.begin_time, after + 60);
    run->jobspec.attributes.begin_time = 1700000060;
    EXPECT_EQ(
        encoding(run),
        R"({"version":1,"apps":[{"command":["./x"],"ntasks":8,"map_by":"","rank_by":"",)"
        R"("bind_to":"","hosts":"","hostfile":"","env":[],"cwd":""}],)"
        R"("job":{"hosts":"","hostfile":"","rankfile":"","topology":"","oversubscribe":false,)"
        R"("nolocal":false,"hwthread_cpus":false,"display":[]},)"
        R"("resources":{"nodes":2,"ntasks":0,"cores_per_task":4,"gpus_per_task":1,)"
        R"("exclusive":true,"constraint":{},"R":null},)"
        R"("attributes":{"name":"sim","cwd":"","environment":{},"time_limit":0,"kill_timeout":5,)"
        R"("kill_on_bad_exit":false,"urgency":31,"begin_time":1700000060,"dependencies":[)"
        R"({"type":"afterok","id":3},{"type":"afterany","id":4},)"
        R"({"type":"afternotok","id":18446744073709551615}],)"
        R"("label_io":false,"output":"","error":"","input":"","unbuffered":false,)"
        R"("timestamp_output":false,"output_dir":"","merge_stderr":false,)"
        R"("rlimits":[],"umask":"","mpi":""}})");
    EXPECT_EQ(run->scheduling_options,
              (std::vector<std::string>{"-N", "-c", "--exclusive", "--urgency", "--dependency",
                                        "--begin-time", "--gpus-per-task", "--dependency"}));
    const auto absolute = parse("run", {"--begin-time", "1700000000.5", "--urgency", "0", "x"});
    ASSERT_TRUE(absolute) << absolute.error().str();
    EXPECT_EQ(absolute->jobspec.attributes.begin_time, 1700000000.5);
    EXPECT_EQ(absolute->jobspec.attributes.urgency, 0);
    // Flux's names for three urgencies.
    for (const auto& [name, urgency] :
         {std::pair{"hold", 0}, std::pair{"default", 16}, std::pair{"expedite", 31}}) {
        const auto named = parse("submit", {"--urgency", name, "x"});
        ASSERT_TRUE(named) << named.error().str();
        EXPECT_EQ(named->jobspec.attributes.urgency, urgency) << name;
    }
}

TEST(ParseRunCommand, LaunchOptionsAndSpellings) {
    const auto run = parse("run", {"--do-not-launch",
                                   "--report-bindings",
                                   "--display-map",
                                   "--oversubscribe",
                                   "--nolocal",
                                   "--use-hwthread-cpus",
                                   "--rankfile",
                                   "ranks",
                                   "--machinefile",
                                   "hosts",
                                   "--topology",
                                   "package:1 core:2 pu:1",
                                   "-o",
                                   "out.{{taskid}}",
                                   "-e",
                                   "err",
                                   "-i",
                                   "all",
                                   "-u",
                                   "-K",
                                   "--kill-timeout",
                                   "500ms",
                                   "--umask",
                                   "077",
                                   "--rlimit",
                                   "core=0",
                                   "--rlimit=nofile=64",
                                   "-np",
                                   "3",
                                   "--mapby",
                                   "slot",
                                   "--rankby",
                                   "node",
                                   "--bindto",
                                   "none",
                                   "/usr/bin/env"});
    ASSERT_TRUE(run) << run.error().str();
    EXPECT_TRUE(run->dry_run);
    const Jobspec& spec = run->jobspec;
    EXPECT_EQ(spec.job.display, (std::vector<std::string>{"bindings", "map"}));
    EXPECT_TRUE(spec.job.oversubscribe && spec.job.nolocal && spec.job.hwthread_cpus);
    EXPECT_EQ(spec.job.rankfile, "ranks");
    EXPECT_EQ(spec.job.hostfile, "hosts");
    EXPECT_EQ(spec.job.topology, "package:1 core:2 pu:1");
    EXPECT_EQ(spec.attributes.output, "out.{{taskid}}");
    EXPECT_EQ(spec.attributes.error, "err");
    EXPECT_EQ(spec.attributes.input, "all");
    EXPECT_TRUE(spec.attributes.unbuffered && spec.attributes.kill_on_bad_exit);
    EXPECT_EQ(spec.attributes.kill_timeout, 0.5);
    EXPECT_EQ(spec.attributes.umask, "077");
    EXPECT_EQ(spec.attributes.rlimits, (std::vector<std::string>{"core=0", "nofile=64"}));
    EXPECT_EQ(spec.attributes.name, "env");
    EXPECT_EQ(spec.apps[0].ntasks, 3u);
    EXPECT_EQ(spec.apps[0].map_by, "slot");
    EXPECT_EQ(spec.apps[0].rank_by, "node");
    EXPECT_EQ(spec.apps[0].bind_to, "none");
    EXPECT_TRUE(parse("run", {"--runtime-options", "donotlaunch", "x"})->dry_run);
    EXPECT_TRUE(parse("run", {"--help"})->help);
}

// The forms of one option users of other launchers type: attached short
// values, `=`, and srun's, flux's, Open MPI's and MPICH's names.
TEST(ParseRunCommand, ValuesAttachedOrAfterEquals) {
    const auto run =
        parse("submit", {"-n2", "-N1", "-c4", "-g=1", "--job-name=sim", "-t1:00:00",
                         "--kill-timeout=2s", "x", ":", "-n=3", "y", ":", "--np=4", "z"});
    ASSERT_TRUE(run) << run.error().str();
    const Jobspec& spec = run->jobspec;
    EXPECT_EQ(spec.apps[0].ntasks, 2u);
    EXPECT_EQ(spec.apps[1].ntasks, 3u);
    EXPECT_EQ(spec.apps[2].ntasks, 4u);
    EXPECT_EQ(spec.resources.nodes, 1u);
    EXPECT_EQ(spec.resources.cores_per_task, 4u);
    EXPECT_EQ(spec.resources.gpus_per_task, 1u);
    EXPECT_EQ(spec.attributes.name, "sim");
    EXPECT_EQ(spec.attributes.time_limit, 3600);
    EXPECT_EQ(spec.attributes.kill_timeout, 2);
    EXPECT_EQ(run->scheduling_options, (std::vector<std::string>{"-N", "-c", "-g"}));
}

TEST(ParseRunCommand, SrunAndFluxSpellings) {
    const auto run = parse("submit", {"--ntasks",
                                      "8",
                                      "--nodes",
                                      "2",
                                      "--cpus-per-task",
                                      "2",
                                      "--ntasks-per-node",
                                      "4",
                                      "-J",
                                      "job",
                                      "-D",
                                      "/tmp",
                                      "--export",
                                      "ALL,A=1",
                                      "-l",
                                      "--gpus-per-task",
                                      "1",
                                      "--exclusive",
                                      "-d",
                                      "afterok:7",
                                      "-t",
                                      "90",
                                      "./x",
                                      ":",
                                      "--chdir",
                                      "/var",
                                      "--tasks-per-node=2",
                                      "--export=NONE",
                                      "./y"});
    ASSERT_TRUE(run) << run.error().str();
    const Jobspec& spec = run->jobspec;
    EXPECT_EQ(spec.apps[0].ntasks, 8u);
    EXPECT_EQ(spec.apps[0].map_by, "ppr:4:node");
    EXPECT_EQ(spec.apps[0].cwd, "/tmp");
    EXPECT_EQ(spec.apps[0].env,
              (std::vector<Jobspec::EnvRule>{{Jobspec::EnvRule::Kind::kSet, "A=1"}}));
    EXPECT_EQ(spec.apps[1].map_by, "ppr:2:node");
    EXPECT_EQ(spec.apps[1].cwd, "/var");
    EXPECT_EQ(spec.apps[1].env,
              (std::vector<Jobspec::EnvRule>{{Jobspec::EnvRule::Kind::kRemove, "*"}}));
    EXPECT_EQ(spec.attributes.name, "job");
    EXPECT_TRUE(spec.attributes.label_io);
    EXPECT_EQ(spec.attributes.time_limit, 5400);
    EXPECT_EQ(spec.resources.nodes, 2u);
    EXPECT_EQ(spec.resources.cores_per_task, 2u);
    EXPECT_EQ(spec.resources.gpus_per_task, 1u);
    EXPECT_TRUE(spec.resources.exclusive);
    EXPECT_EQ(spec.attributes.dependencies,
              (std::vector<Jobspec::Dependency>{{Jobspec::Dependency::Type::kAfterOk, 7}}));
    // --export without ALL starts from nothing: NAME copies, NAME=VALUE sets.
    const auto listed = parse("run", {"--export=PATH,B=2", "x"});
    ASSERT_TRUE(listed) << listed.error().str();
    EXPECT_EQ(listed->jobspec.apps[0].env,
              (std::vector<Jobspec::EnvRule>{{Jobspec::EnvRule::Kind::kRemove, "*"},
                                             {Jobspec::EnvRule::Kind::kSet, "PATH"},
                                             {Jobspec::EnvRule::Kind::kSet, "B=2"}}));
}

TEST(ParseRunCommand, OpenMpiAndMpichSpellings) {
    using Kind = Jobspec::EnvRule::Kind;
    const auto run = parse("run", {"-x",
                                   "A=1",
                                   "-x",
                                   "B",
                                   "-genv",
                                   "C",
                                   "3",
                                   "-genvlist",
                                   "D,E",
                                   "--mca",
                                   "btl",
                                   "tcp,self",
                                   "-ppn",
                                   "2",
                                   "-f",
                                   "hosts",
                                   "-wdir",
                                   "/tmp",
                                   "--tag-output",
                                   "--prtemca",
                                   "plm_ssh_agent",
                                   "rsh",
                                   "./a",
                                   ":",
                                   "-env",
                                   "F",
                                   "6",
                                   "-hosts",
                                   "n1,n2",
                                   "--npernode",
                                   "1",
                                   "./b",
                                   ":",
                                   "-machinefile",
                                   "more",
                                   "./c"});
    ASSERT_TRUE(run) << run.error().str();
    const Jobspec& spec = run->jobspec;
    EXPECT_EQ(spec.apps[0].env,
              (std::vector<Jobspec::EnvRule>{{Kind::kSet, "A=1"},
                                             {Kind::kSet, "B"},
                                             {Kind::kSet, "C=3"},
                                             {Kind::kSet, "D"},
                                             {Kind::kSet, "E"},
                                             {Kind::kSet, "OMPI_MCA_btl=tcp,self"}}));
    EXPECT_EQ(spec.apps[0].map_by, "ppr:2:node");
    EXPECT_EQ(spec.apps[0].cwd, "/tmp");
    EXPECT_EQ(spec.job.hostfile, "hosts");
    EXPECT_TRUE(spec.attributes.label_io);
    EXPECT_EQ(spec.apps[1].env, (std::vector<Jobspec::EnvRule>{{Kind::kSet, "F=6"}}));
    EXPECT_EQ(spec.apps[1].hosts, "n1,n2");
    EXPECT_EQ(spec.apps[1].map_by, "ppr:1:node");
    EXPECT_EQ(spec.apps[2].hostfile, "more");
    EXPECT_EQ(run->notes, (std::vector<std::string>{
                              "run: --prtemca plm_ssh_agent ignored: gantry is not PRRTE (its "
                              "own options set what PRRTE's parameters do)"}));
}

// Open MPI's output options: the job's, before its first command.
TEST(ParseRunCommand, OpenMpiOutputOptions) {
    const auto run =
        parse("submit", {"--timestamp-output", "--output-filename=out:nocopy",
                         "--merge-stderr-to-stdout", "-n", "1", "./a", ":", "-n", "1", "./b"});
    ASSERT_TRUE(run) << run.error().str();
    const Jobspec::Attributes& attributes = run->jobspec.attributes;
    EXPECT_TRUE(attributes.timestamp_output);
    EXPECT_EQ(attributes.output_dir, "out:nocopy");
    EXPECT_TRUE(attributes.merge_stderr);
    const auto defaults = parse("run", {"./a"});
    ASSERT_TRUE(defaults) << defaults.error().str();
    EXPECT_FALSE(defaults->jobspec.attributes.timestamp_output);
    EXPECT_EQ(defaults->jobspec.attributes.output_dir, "");
    EXPECT_FALSE(defaults->jobspec.attributes.merge_stderr);
    const auto later = parse("run", {"./a", ":", "--merge-stderr-to-stdout", "./b"});
    ASSERT_FALSE(later);
    EXPECT_EQ(later.error().str(),
              "run: --merge-stderr-to-stdout in app 1's segment: it is the job's; give it "
              "before the first command");
    const auto flag = parse("run", {"--timestamp-output=yes", "./a"});
    ASSERT_FALSE(flag);
    EXPECT_EQ(flag.error().str(),
              "run: --timestamp-output takes no value in \"--timestamp-output=yes\"");
}

// Open MPI 4.1 still reads its long options with one dash, and scripts
// written for it do: `mpirun -np 2 -map-by core -bind-to core ...`.
TEST(ParseRunCommand, OpenMpiSingleDashLongOptions) {
    const auto run = parse("run", {"-np", "2", "-map-by", "core", "-rank-by", "slot", "-bind-to",
                                   "core", "-host", "a:2", "-oversubscribe", "-report-bindings",
                                   "-display-map", "-tag-output", "-mca", "btl", "self", "./x"});
    ASSERT_TRUE(run) << run.error().str();
    const Jobspec& spec = run->jobspec;
    EXPECT_EQ(spec.apps[0].map_by, "core");
    EXPECT_EQ(spec.apps[0].rank_by, "slot");
    EXPECT_EQ(spec.apps[0].bind_to, "core");
    EXPECT_EQ(spec.job.hosts, "a:2");
    EXPECT_TRUE(spec.job.oversubscribe);
    EXPECT_EQ(spec.job.display, (std::vector<std::string>{"bindings", "map"}));
    EXPECT_TRUE(spec.attributes.label_io);
    EXPECT_EQ(spec.apps[0].env,
              (std::vector<Jobspec::EnvRule>{{Jobspec::EnvRule::Kind::kSet, "OMPI_MCA_btl=self"}}));
}

// `--` ends a segment's options: what follows is the command, even when it
// begins with '-'; `:` still starts the next app.
TEST(ParseRunCommand, DoubleDashEndsTheOptions) {
    const auto run = parse("run", {"-n", "1", "--", "echo", "hi", ":", "--", "-weird", "-n", "2"});
    ASSERT_TRUE(run) << run.error().str();
    EXPECT_EQ(run->jobspec.apps[0].command, (std::vector<std::string>{"echo", "hi"}));
    EXPECT_EQ(run->jobspec.apps[1].command, (std::vector<std::string>{"-weird", "-n", "2"}));
    EXPECT_EQ(run->jobspec.apps[1].ntasks, 0u);
}

// PRRTE's DISPLAY and REPORT qualifiers ask for the map and the bindings.
TEST(ParseRunCommand, DisplayAndReportQualifiers) {
    const auto run = parse("run", {"--display", "map", "--map-by", "core:DISPLAY", "--bind-to",
                                   "core:REPORT", "x", ":", "--map-by", "slot:display", "y"});
    ASSERT_TRUE(run) << run.error().str();
    EXPECT_EQ(run->jobspec.job.display, (std::vector<std::string>{"map", "bindings"}));
    EXPECT_EQ(run->jobspec.apps[0].map_by, "core:DISPLAY");
}

// srun's --mpi: which interface the tasks get, the job's; without it, both
// (an empty attributes.mpi).
// --requires compiles its query into the jobspec's RFC 31 constraint;
// several must all hold.
TEST(ParseRunCommand, RequiresIsTheJobsConstraint) {
    const auto one = parse("submit", {"--requires", "gpu,-big", "x"});
    ASSERT_TRUE(one) << one.error().str();
    EXPECT_EQ(one->jobspec.resources.constraint.dump(), R"({"properties":["gpu","^big"]})");
    EXPECT_NE(
        encoding(one).find(R"("exclusive":false,"constraint":{"properties":["gpu","^big"]},)"),
        std::string::npos)
        << encoding(one);
    EXPECT_EQ(one->scheduling_options, std::vector<std::string>{"--requires"});
    const auto two = parse("run", {"--requires=host:n[1-4]", "--requires", "gpu or rank:0", "x"});
    ASSERT_TRUE(two) << two.error().str();
    EXPECT_EQ(
        two->jobspec.resources.constraint.dump(),
        R"({"and":[{"hostlist":["n[1-4]"]},{"or":[{"properties":["gpu"]},{"ranks":["0"]}]}]})");
    const auto bad = parse("run", {"--requires", "gpu |", "x"});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().str(),
              "run: --requires: constraint: expected a term after 'or', found the end of the "
              "query at offset 5 in \"gpu |\"");
}

TEST(ParseRunCommand, MpiChoosesTheInterface) {
    struct Case {
        const char* command;
        std::vector<std::string> args;
        const char* mpi;
    };
    const Case kCases[] = {
        {"run", {"--mpi=pmix", "x"}, "pmix"},
        {"run", {"--mpi", "pmi1", "x"}, "pmi1"},
        {"submit", {"--mpi=none", "-n", "2", "x"}, "none"},
        {"submit", {"-n", "2", "--mpi", "pmix", "x", ":", "y"}, "pmix"},
        {"job map", {"--mpi=pmi1", "x"}, "pmi1"},
        {"run", {"x"}, ""},
    };
    for (const Case& c : kCases) {
        const auto run = parse(c.command, c.args);
        ASSERT_TRUE(run) << run.error().str();
        EXPECT_EQ(run->jobspec.attributes.mpi, c.mpi) << c.args.front();
    }
    const auto run = parse("submit", {"--mpi", "none", "x"});
    ASSERT_TRUE(run) << run.error().str();
    EXPECT_NE(encoding(run).find(R"("umask":"","mpi":"none"}})"), std::string::npos)
        << encoding(run);
}

TEST(ParseRunCommand, UriIsAnOption) {
    EXPECT_EQ(parse("run", {"--uri", "local:///tmp/s", "x"})->uri, "local:///tmp/s");
    EXPECT_EQ(parse("submit", {"-n", "1", "--uri=local:///tmp/s", "x"})->uri, "local:///tmp/s");
    EXPECT_FALSE(parse("run", {"x", "--uri", "y"})->uri);
}

// --resources is read at once: the jobspec carries the document.
TEST(ParseRunCommand, ResourcesFileIsRead) {
    const std::string json =
        R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-1"}}]}})";
    const std::string path = test::write_temp_file("gantry-run-options-R.json", json);
    const auto run = parse("run", {"--resources", path, "x"});
    ASSERT_TRUE(run) << run.error().str();
    EXPECT_EQ(run->jobspec.resources.R, *ResourceSet::parse(json));
    EXPECT_EQ(parse("run", {"--resources", "/nonexistent/R.json", "x"}).error().str(),
              "run: resource set \"/nonexistent/R.json\": No such file or directory");
}

TEST(ParseRunCommand, BadCommandLinesGiveOneMessage) {
    struct Case {
        const char* command;
        std::vector<std::string> args;
        const char* error;
    };
    const Case kCases[] = {
        {"submit", {"--x", "a"}, "submit: unknown option \"--x\" (see gantry submit --help)"},
        {"submit", {"-n", "2"}, "submit: no command to run (see gantry submit --help)"},
        {"run", {"-n", "0", "x"}, "run: -n needs a task count in \"0\""},
        {"run",
         {"--map-by", "core", "--map-by", "node", "x"},
         "run: --map-by given twice for one app"},
        {"run",
         {"--time-limit", "5x", "x"},
         "run: bad time limit (minutes as 30, [D-]H:M:S as 1:00:00 or 2-00:00:00, or 90s, 1.5h, "
         "1d) in \"5x\""},
        {"run",
         {"x", ":", "-N", "2", "y"},
         "run: -N in app 1's segment: it is the job's; give it before the first command"},
        {"run", {"-N", "0", "x"}, "run: -N needs a node count in \"0\""},
        {"run",
         {"--cores-per-task", "0", "x"},
         "run: --cores-per-task needs a core count in \"0\""},
        {"run", {"-g", "x1", "x"}, "run: -g needs a GPU count in \"x1\""},
        {"run",
         {"--urgency", "32", "x"},
         "run: --urgency needs 0-31, hold, default or expedite in \"32\""},
        {"run",
         {"--begin-time", "+5x", "x"},
         "run: --begin-time takes +DURATION (+30s, +5m, +1h) or seconds since the epoch in "
         "\"+5x\""},
        {"run",
         {"--begin-time", "-1", "x"},
         "run: --begin-time takes +DURATION (+30s, +5m, +1h) or seconds since the epoch in "
         "\"-1\""},
        {"run",
         {"--dependency", "after:3", "x"},
         "run: --dependency takes afterok:ID, afterany:ID or afternotok:ID, not \"after:3\" in "
         "\"after:3\""},
        {"run",
         {"--dependency", "afterok:3,", "x"},
         "run: --dependency takes afterok:ID, afterany:ID or afternotok:ID in \"afterok:3,\""},
        {"run",
         {"--dependency", "afterok:0", "x"},
         "run: --dependency: job ids are positive integers, not \"0\" in \"afterok:0\""},
        {"run", {"--job-name", "", "x"}, "run: --job-name needs a name"},
        {"run", {"--nodes"}, "run: --nodes needs a value"},
        {"run", {"-genv", "A"}, "run: -genv needs a name and a value"},
        {"run",
         {"--oversubscribe=no", "x"},
         "run: --oversubscribe takes no value in \"--oversubscribe=no\""},
        {"submit",
         {"--exclusive=false", "x"},
         "submit: --exclusive takes no value in \"--exclusive=false\""},
        {"run", {"-nx", "x"}, "run: -n needs a task count in \"x\""},
        {"run", {"-q", "x"}, "run: unknown option \"-q\" (see gantry run --help)"},
        {"run", {"-lK", "x"}, "run: unknown option \"-lK\" (see gantry run --help)"},
        {"run",
         {"x", ":", "-genv", "A", "1", "y"},
         "run: -genv in app 1's segment: it is the job's; give it before the first command"},
        {"run",
         {"--map-by", "core", "-ppn", "2", "x"},
         "run: -ppn is --map-by ppr:2:node, and this app's --map-by is given already"},
        {"run",
         {"--ntasks-per-node", "0", "x"},
         "run: --ntasks-per-node needs a task count in \"0\""},
        {"run", {"--export", "", "x"}, "run: --export takes ALL, NONE or NAME[=VALUE],... in \"\""},
        {"run",
         {"--export=A,,B", "x"},
         "run: --export takes ALL, NONE or NAME[=VALUE],... in \"A,,B\""},
        {"run", {"--mpi=pmi2", "x"}, "run: --mpi takes pmix, pmi1 or none in \"pmi2\""},
        {"submit", {"--mpi", "PMIx", "x"}, "submit: --mpi takes pmix, pmi1 or none in \"PMIx\""},
        {"run", {"--mpi=", "x"}, "run: --mpi takes pmix, pmi1 or none in \"\""},
        {"run", {"--mpi"}, "run: --mpi needs a value"},
        {"run",
         {"x", ":", "--mpi", "none", "y"},
         "run: --mpi in app 1's segment: it is the job's; give it before the first command"},
        {"run",
         {"-t", "1:2:3:4", "x"},
         "run: bad time limit (minutes as 30, [D-]H:M:S as 1:00:00 or 2-00:00:00, or 90s, 1.5h, "
         "1d) in \"1:2:3:4\""},
    };
    for (const Case& c : kCases) {
        const auto run = parse(c.command, c.args);
        EXPECT_EQ(run ? "no error" : run.error().str(), c.error);
    }
}

// A Slurm allocation's hosts and slots, as -H takes them.
TEST(SlurmHosts, FromTheAllocationsVariables) {
    EXPECT_EQ(slurm_hosts("vm", "1").value(), "vm:1");
    EXPECT_EQ(slurm_hosts("n[1-4]", "2(x3),1").value(), "n1:2,n2:2,n3:2,n4:1");
    EXPECT_EQ(slurm_hosts("a,b", "4,8").value(), "a:4,b:8");
    EXPECT_EQ(slurm_hosts("a,b", "4,8", "SLURM_JOB_CPUS_PER_NODE").value(), "a:4,b:8");
}

TEST(SlurmHosts, BadVariablesAreNamed) {
    EXPECT_EQ(slurm_hosts("n[1-2]", "2(x3)").error().str(),
              "run: SLURM_TASKS_PER_NODE \"2(x3)\" does not give one count to each of the 2 "
              "nodes of SLURM_JOB_NODELIST");
    EXPECT_EQ(slurm_hosts("n[1-2]", "2,").error().str(),
              "run: SLURM_TASKS_PER_NODE: expected a count at offset 2 in \"2,\"");
    EXPECT_EQ(slurm_hosts("n[1-2]", "2(y2)").error().str(),
              "run: SLURM_TASKS_PER_NODE: expected (xN) after the count at offset 1 in "
              "\"2(y2)\"");
    EXPECT_EQ(slurm_hosts("n[1-2]", "2(x)", "SLURM_JOB_CPUS_PER_NODE").error().str(),
              "run: SLURM_JOB_CPUS_PER_NODE: expected a count of nodes at offset 3 in \"2(x)\"");
    EXPECT_EQ(slurm_hosts("n[1-", "1").error().str().substr(0, 24), "run: SLURM_JOB_NODELIST:");
}

}  // namespace
}  // namespace gantry::cli
