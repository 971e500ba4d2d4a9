// `gantry run --dry-run`: whole outputs and exit codes.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "support/crafted_topology.h"
#include "support/run_command.h"
#include "support/scratch.h"
#include "support/vectors.h"

namespace gantry::test {
namespace {

// Job ids carry the host and pid: name them as PRRTE's goldens do.
std::string without_job_id(const std::string& text) {
    return std::regex_replace(text, std::regex(R"(gantry-\S+@\d+)"), "JOB");
}

constexpr const char* kMachine = "package:2 core:4 pu:2";

TEST(RunCommand, MpmdDryRunShowsOnePolicyLinePerApp) {
    const auto result = run_gantry({"run",       "--dry-run",  "--display", "map",  "-H",
                                    "n0:4,n1:4", "--topology", kMachine,    "-n",   "2",
                                    "--map-by",  "package",    "./a",       "x",    ":",
                                    "-n",        "4",          "--map-by",  "core", "./b"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(without_job_id(result.out),
              "\n"
              "========================   JOB MAP   ========================\n"
              "Data for JOB JOB offset 0 Total slots allocated 8\n"
              "    App 0: Mapper: round_robin  Mapping policy: BYPACKAGE:NOOVERSUBSCRIBE  Ranking "
              "policy: FILL  Binding policy: PACKAGE:IF-SUPPORTED\n"
              "    App 1: Mapper: round_robin  Mapping policy: BYCORE:NOOVERSUBSCRIBE  Ranking "
              "policy: FILL  Binding policy: CORE:IF-SUPPORTED\n"
              "    Cpu set: N/A  PPR: N/A  Cpus-per-rank: N/A  Cpu Type: CORE\n"
              "\n"
              "\n"
              "Data for node: n0\tNum slots: 4\tMax slots: 0\tNum procs: 4\n"
              "        Process jobid: JOB App: 0 Process rank: 0 Bound: package[0][core:L0-3]\n"
              "        Process jobid: JOB App: 0 Process rank: 1 Bound: package[1][core:L4-7]\n"
              "        Process jobid: JOB App: 1 Process rank: 2 Bound: package[0][core:L1]\n"
              "        Process jobid: JOB App: 1 Process rank: 3 Bound: package[0][core:L2]\n"
              "\n"
              "Data for node: n1\tNum slots: 4\tMax slots: 0\tNum procs: 2\n"
              "        Process jobid: JOB App: 1 Process rank: 4 Bound: package[0][core:L0]\n"
              "        Process jobid: JOB App: 1 Process rank: 5 Bound: package[0][core:L1]\n"
              "\n"
              "Warning: This map has been generated without launching anything (dry run);\n"
              "the nodes were given the topologies they were told to have.\n"
              "\n"
              "=============================================================\n");
}

TEST(RunCommand, MpirunSpellingsAndBindings) {
    const auto result =
        run_gantry({"run", "--do-not-launch", "--report-bindings", "-H", "a:1", "--topology",
                    kMachine, "--oversubscribe", "-np", "2", "--bind-to", "core", "hostname"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(without_job_id(result.out),
              "Proc JOB[0] Node a bound to package[0][core:L0]\n"
              "Proc JOB[1] Node a bound to package[0][core:L1]\n");
}

TEST(RunCommand, HostfileAndJson) {
    const std::string hostfile =
        write_temp_file("gantry-run-hosts", "# two nodes\nn0 slots=1\nn1 slots=1\n");
    const auto result = run_gantry({"run", "--rtos", "donotlaunch", "--display", "map:json",
                                    "--hostfile", hostfile, "--topology", "package:1 core:2 pu:1",
                                    "--map-by", "node", "-n", "2", "--bind-to", "none", "true"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out,
              R"({"apps":[{"app":0,"binding":"NONE","cpu_type":"CORE","mapping":)"
              R"("BYNODE:NOOVERSUBSCRIBE","ranking":"NODE","tasks":2}],"nodes":[{"max_slots":0,)"
              R"("name":"n0","slots":1},{"max_slots":0,"name":"n1","slots":1}],"oversubscribe":)"
              R"(false,"tasks":[{"app":0,"app_rank":0,"cpus":"","cpus_os":"","gpus":[],)"
              R"("local_rank":0,"node":"n0","node_rank":0,"rank":0},{"app":0,"app_rank":1,)"
              R"("cpus":"","cpus_os":"","gpus":[],"local_rank":0,"node":"n1","node_rank":0,)"
              R"("rank":1}]})"
              "\n");
}

TEST(RunCommand, NodesFromAResourceSet) {
    const std::string r = write_temp_file(
        "gantry-run-R.json",
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"6-7"}}],)"
        R"("nodelist":["n[0-1]"]}})");
    const auto result =
        run_gantry({"run", "--dry-run", "--display", "bindings", "--resources", r, "--topology",
                    kMachine, "-n", "3", "--map-by", "core", "hostname"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(without_job_id(result.out),
              "Proc JOB[0] Node n0 bound to package[1][core:L6]\n"
              "Proc JOB[1] Node n0 bound to package[1][core:L7]\n"
              "Proc JOB[2] Node n1 bound to package[1][core:L6]\n");
    // -H beside --resources picks among R's hosts, as beside a hostfile.
    const auto picked = run_gantry({"run", "--dry-run", "--display", "bindings", "--resources", r,
                                    "--topology", kMachine, "-H", "n1", "-n", "1", "hostname"});
    EXPECT_EQ(picked.err, "");
    EXPECT_EQ(without_job_id(picked.out), "Proc JOB[0] Node n1 bound to package[1][core:L6]\n");
    const auto both =
        run_gantry({"run", "--dry-run", "--resources", r, "--topology", kMachine, "-H", "a", "x"});
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_EQ(both.err, "gantry: run: app 0's host a is not in --resources\n");
}

// A later app's own -H: only those hosts, added to the job's.
TEST(RunCommand, PerAppHosts) {
    const auto result =
        run_gantry({"run",    "--dry-run", "--display", "bindings", "-H", "n0:3", "--topology",
                    kMachine, "-n",        "2",         "a",        ":",  "-H",   "n1:2",
                    "-n",     "2",         "b",         ":",        "-n", "1",    "c"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(without_job_id(result.out),
              "Proc JOB[0] Node n0 bound to package[0][core:L0]\n"
              "Proc JOB[1] Node n0 bound to package[0][core:L1]\n"
              "Proc JOB[2] Node n1 bound to package[0][core:L0]\n"
              "Proc JOB[3] Node n1 bound to package[0][core:L1]\n"
              "Proc JOB[4] Node n0 bound to package[0][core:L2]\n");
}

// A topology file hwloc 2.9 crashes on (support/crafted_topology.h) is a
// user's error, not a crash.
TEST(RunCommand, ATopologyFileHwlocCannotReadIsAnError) {
    ScratchDir dir("gantry-run-topology");
    const std::string path = dir / "crafted.xml";
    std::ofstream(path) << kXmlHwlocCrashesOn;
    const auto result = run_gantry({"run", "--dry-run", "--topology", path, "-n", "1", "true"});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_TRUE(result.err.starts_with("gantry: topology: cannot load XML topology: "))
        << result.err;
    EXPECT_TRUE(result.err.ends_with(" in \"" + path + "\"\n")) << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
    EXPECT_EQ(result.out, "");
}

// `--hostfile hosts -H node0 -n 1 a : -H node1,node2 -n 2 b`: the hostfile
// gives the hosts, each app's -H picks among them.
TEST(RunCommand, PerAppHostsWithinAHostfile) {
    const std::string hosts =
        write_temp_file("gantry-run-per-app-hosts", "node0 slots=2\nnode1 slots=1\nnode2\n");
    const auto result = run_gantry({"run", "--dry-run", "--display", "bindings", "--topology",
                                    kMachine, "--hostfile", hosts, "-H", "node0", "-n", "1", "a",
                                    ":", "-H", "node1,node2", "-n", "2", "b"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(without_job_id(result.out),
              "Proc JOB[0] Node node0 bound to package[0][core:L0]\n"
              "Proc JOB[1] Node node1 bound to package[0][core:L0]\n"
              "Proc JOB[2] Node node2 bound to package[0][core:L0]\n");
    const auto outside = run_gantry({"run", "--dry-run", "--topology", kMachine, "--hostfile",
                                     hosts, "-n", "1", "a", ":", "-H", "node3", "-n", "1", "b"});
    EXPECT_EQ(outside.err,
              "gantry: run: app 1's host node3 is not in the hostfile \"" + hosts + "\"\n");
    EXPECT_EQ(outside.exit_code, 2);
}

// PRRTE's relative hosts: app 1 on the nodes app 0 left empty, app 2 on
// the job's node 2.
TEST(RunCommand, RelativeHosts) {
    const auto result =
        run_gantry({"run",        "--dry-run", "--display", "bindings", "-H", "n0:2,n1:2,n2:2",
                    "--topology", kMachine,    "-n",        "2",        "a",  ":",
                    "-H",         "+e",        "-n",        "3",        "b",  ":",
                    "-H",         "+n2",       "-n",        "1",        "c"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(without_job_id(result.out),
              "Proc JOB[0] Node n0 bound to package[0][core:L0]\n"
              "Proc JOB[1] Node n0 bound to package[0][core:L1]\n"
              "Proc JOB[2] Node n1 bound to package[0][core:L0]\n"
              "Proc JOB[3] Node n1 bound to package[0][core:L1]\n"
              "Proc JOB[4] Node n2 bound to package[0][core:L0]\n"
              "Proc JOB[5] Node n2 bound to package[0][core:L1]\n");
}

// seq without FILE=: one task per hostfile line, in order, slots ignored;
// a later app reads its own -H.
TEST(RunCommand, SeqReadsTheHosts) {
    const std::string hostfile =
        write_temp_file("gantry-run-seq-hosts", "n1 slots=4\nn0\nn1 slots=2\n");
    const auto result = run_gantry({"run", "--dry-run", "--display", "bindings", "--hostfile",
                                    hostfile, "--topology", kMachine, "--map-by", "seq", "x", ":",
                                    "-H", "n0,n1", "--map-by", "seq", "y"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(without_job_id(result.out),
              "Proc JOB[0] Node n1 bound to package[0][core:L0]\n"
              "Proc JOB[1] Node n0 bound to package[0][core:L0]\n"
              "Proc JOB[2] Node n1 bound to package[0][core:L1]\n"
              "Proc JOB[3] Node n0 bound to package[0][core:L1]\n"
              "Proc JOB[4] Node n1 bound to package[0][core:L2]\n");
}

TEST(RunCommand, BadInputIsOneLineAndExitTwo) {
    struct Case {
        std::vector<std::string> args;
        std::string err;
    };
    const Case kCases[] = {
        {{"run", "--dry-run", "-n", "2", "--map-by", "bogus", "x"},
         "gantry: map-by: unknown directive \"bogus\" (Valid directives: slot, hwthread, core, "
         "l1cache, l2cache, l3cache, numa, package, socket, node, seq, ppr, rankfile, pe-list, "
         "device) in \"bogus\"\n"},
        {{"run", "--dry-run", "-n", "two", "x"}, "gantry: run: -n needs a task count in \"two\"\n"},
        {{"run", "--dry-run", "-n", "2"},
         "gantry: run: no command to run (see gantry run --help)\n"},
        {{"run", "--dry-run", "-n", "1", ":", "x"}, "gantry: run: app 0 has no command\n"},
        {{"run", "--dry-run", "x", ":", "--topology", "a", "y"},
         "gantry: run: --topology in app 1's segment: it is the job's; give it before the first "
         "command\n"},
        {{"run", "--dry-run", "--bogus", "x"},
         "gantry: run: unknown option \"--bogus\" (see gantry run --help)\n"},
        {{"run", "--dry-run", "--display", "svg", "x"},
         "gantry: run: --display shows map, map:json, map:svg=FILE, bindings, R or plan, not "
         "\"svg\" in \"svg\"\n"},
        {{"run", "--dry-run", "-H", "a:2", "--topology", kMachine, "-n", "3", "x"},
         "gantry: map: app 0 (-n 3 x): there are not enough slots available: 3 tasks do not fit "
         "in the 2 free slots of a; add :OVERSUBSCRIBE to the job's --map-by or give fewer "
         "tasks\n"},
        {{"run", "--dry-run", "-H", "a:8", "--topology", kMachine, "-n", "2", "--map-by",
          "core:oversubscribe", "x", ":", "-n", "2", "--map-by", "node:nooversubscribe", "y"},
         "gantry: map-by: app 1: NOOVERSUBSCRIBE in its --map-by is oversubscription for the "
         "whole job and cannot be given per app; it contradicts the job's OVERSUBSCRIBE "
         "(conflicting values); give it once, in the first segment\n"},
        {{"run", "--dry-run", "--map-by", "core", "--map-by", "node", "x"},
         "gantry: run: --map-by given twice for one app\n"},
        {{"run", "--dry-run", "--topology", kMachine, "--map-by", "seq", "x"},
         "gantry: map-by: app 0 (x): seq needs its file: seq:FILE=path, or hosts from -H or "
         "--hostfile\n"},
        {{"run", "--dry-run", "-H", "+n0", "x"},
         "gantry: run: the relative host +n0 names one of the job's nodes; give it in a later "
         "app's -H\n"},
        {{"run", "--dry-run", "-H", "n0", "--topology", kMachine, "-n", "1", "x", ":", "-H", "+e",
          "-n", "1", "y"},
         "gantry: map: app 1: +e asks for the empty nodes and 0 are left; give fewer or more "
         "nodes\n"},
        {{"run", "--dry-run", "-H", "n0", "x", ":", "-H", "+e:0", "y"},
         "gantry: hosts: bad relative host \"+e:0\" (+n<i>, +e or +e:N with N > 0) in "
         "\"+e:0\"\n"},
    };
    for (const auto& c : kCases) {
        const auto result = run_gantry(c.args);
        EXPECT_EQ(result.exit_code, 2) << c.err;
        EXPECT_EQ(result.out, "");
        EXPECT_EQ(result.err, c.err);
    }
}

// The job's R and the launch plans, for an MPMD job with arguments: app 0
// bound by package, app 1 unbound.
TEST(RunCommand, ResourcesAndLaunchPlan) {
    const auto result = run_gantry(
        {"run",    "--dry-run", "--display", "R,plan",   "-H",        "n0:3,n1:1", "--topology",
         kMachine, "-n",        "2",         "--map-by", "package",   "./a",       "-x",
         "y z",    ":",         "-n",        "2",        "--bind-to", "none",      "./b"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out,
              R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-7"}},)"
              R"({"rank":"1","children":{"core":"0"}}],"nodelist":["n[0-1]"],)"
              R"("starttime":0.0,"expiration":0.0}})"
              "\n"
              R"({"hostname":"n0","job_size":4,"node":0,"tasks":[)"
              R"({"app":0,"app_rank":0,"argv":["./a","-x","y z"],"cpus_os":"0-7","gpus":[],)"
              R"("local_rank":0,"node_rank":0,"rank":0},)"
              R"({"app":0,"app_rank":1,"argv":["./a","-x","y z"],"cpus_os":"8-15","gpus":[],)"
              R"("local_rank":1,"node_rank":1,"rank":1},)"
              R"({"app":1,"app_rank":0,"argv":["./b"],"cpus_os":"","gpus":[],)"
              R"("local_rank":2,"node_rank":2,"rank":2}]})"
              "\n"
              R"({"hostname":"n1","job_size":4,"node":1,"tasks":[)"
              R"({"app":1,"app_rank":1,"argv":["./b"],"cpus_os":"","gpus":[],)"
              R"("local_rank":0,"node_rank":0,"rank":3}]})"
              "\n");
}

TEST(RunCommand, SvgMapIsWritten) {
    const ScratchDir scratch("gantry-run-map");
    const std::string svg = scratch / "map.svg";
    const auto result = run_gantry({"run", "--dry-run", "--display", "map:svg=" + svg, "-H", "a:2",
                                    "--topology", kMachine, "-n", "2", "x"});
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "");
    const std::string text = read_file(svg);
    EXPECT_EQ(text.substr(0, 40), "<svg xmlns=\"http://www.w3.org/2000/svg\" ");
    EXPECT_NE(text.find(">a (2 tasks)</text>"), std::string::npos);
    const auto unwritable =
        run_gantry({"run", "--dry-run", "--display", "map:svg=/nonexistent/m.svg", "-H", "a:2",
                    "--topology", kMachine, "x"});
    EXPECT_EQ(unwritable.exit_code, 1);
    EXPECT_EQ(unwritable.err, "gantry: run: cannot write the map to \"/nonexistent/m.svg\"\n");
}

// A PRRTE golden, end to end through the command line.
TEST(RunCommand, PrrteGoldenThroughTheCommand) {
    GANTRY_REQUIRE_VECTORS();
    const auto dir = *vectors_dir() / "prrte-offline";
    const auto result =
        run_gantry({"run", "--dry-run", "--display", "map", "--topology",
                    (dir / "topologies" / "test-topo.xml").string(), "-H",
                    "node0:8,node1:8,node2:8", "-n", "14", "--map-by", "slot:oversubscribe",
                    "hostname", ":", "-n", "14", "--map-by", "node", "hostname"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::string out =
        std::regex_replace(result.out, std::regex(R"(gantry-\S+@\d+)"), "prterun-JOBID@N");
    out = std::regex_replace(out, std::regex(R"(Total slots allocated \d+)"),
                             "Total slots allocated N");
    out = out.substr(0, out.find("\nWarning: This map has been generated"));
    EXPECT_EQ(out, read_file(dir / "golden" / "test-topo" / "perapp.test-topo.jobqual.map"));
}

}  // namespace
}  // namespace gantry::test
