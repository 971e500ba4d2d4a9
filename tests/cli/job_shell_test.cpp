// `gantry job-shell` as a broker starts it: the header on fd 4, the
// supervisor socket on fd 3, where the test reads its records. Each shell
// runs the tasks of the node of its own broker rank, even when every rank of
// R carries this host's name (brokers on one host posing as nodes).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "formats/jobspec.h"
#include "formats/rset.h"
#include "shell/records.h"
#include "support/run_command.h"
#include "topo/topology.h"
#include "util/base64.h"
#include "util/json.h"

namespace gantry::test {
namespace {

using shell::records::Record;
using Kind = Record::Kind;

struct ShellRun {
    int exit_code = -1;
    std::vector<Record> records;
};

// Writes `text` to an anonymous file, rewound: the header as the broker
// hands it over.
int header_fd(const std::string& text) {
    const int fd = ::memfd_create("gantry-job-shell-test", MFD_CLOEXEC);
    if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        ::lseek(fd, 0, SEEK_SET) != 0)
        throw std::runtime_error("memfd");
    return fd;
}

// Runs `gantry job-shell` with `header` and reads its records to the end.
ShellRun run_job_shell(const Json& header) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        throw std::runtime_error("socketpair");
    const int header_file = header_fd(to_compact(header));
    const std::string program = gantry_binary();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_RDWR);
        if (::dup2(null, 0) < 0 || ::dup2(null, 1) < 0 || ::dup2(null, 2) < 0 ||
            ::dup2(pair[1], 3) < 0 || ::dup2(header_file, 4) < 0)
            ::_exit(126);
        ::setsid();
        ::execl(program.c_str(), "gantry", "job-shell", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(pair[1]);
    ::close(header_file);
    ShellRun run;
    shell::records::Reader reader;
    char block[4096];
    for (;;) {
        const ssize_t n = ::read(pair[0], block, sizeof block);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        reader.append(std::string_view(block, static_cast<std::size_t>(n)));
        for (auto record = reader.next(); record && *record; record = reader.next())
            run.records.push_back(std::move(**record));
    }
    ::close(pair[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return run;
}

// The records that say what ran: each task's stdout and end, and messages.
std::vector<std::string> what_ran(const ShellRun& run) {
    std::vector<std::string> lines;
    for (const Record& record : run.records)
        if (record.kind == Kind::kStdout)
            lines.push_back("out " + std::to_string(record.rank) + " " + record.bytes);
        else if (record.kind == Kind::kExit)
            lines.push_back("exit " + std::to_string(record.rank) + " " +
                            std::to_string(record.wait_status));
        else if (record.kind == Kind::kMessage)
            lines.push_back("msg " + record.bytes);
    return lines;
}

// Two tasks, one per node, each saying where it runs; R of two ranks, core
// 0 of this machine each, both named as this host; every rank of this
// machine's topology.
Json header_for(std::uint32_t rank) {
    Jobspec spec;
    Jobspec::App app;
    app.command = {"sh", "-c", "echo task $GANTRY_TASK_RANK node $GANTRY_NODE_ID"};
    app.ntasks = 2;
    app.map_by = "node";
    spec.apps = {app};
    spec.attributes.environment = {{"PATH", "/usr/bin:/bin"}};
    const std::string host = local_hostname();
    const auto R = ResourceSet::parse(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"}}],)"
        R"("nodelist":[")" +
        host + "," + host + R"("]}})");
    if (!R)
        throw std::runtime_error(R.error().str());
    const std::string xml = Topology::local().value().to_xml();
    return {
        {"id", "9"},
        {"jobspec", spec.to_json()},
        {"R", R->to_json()},
        {"rank", rank},
        {"topologies", Json::array({{{"ranks", "0-1"}, {"xml", xml}}})},
        {"map_inputs", {{"hostname", host}, {"names", Json::array()}, {"files", Json::array()}}}};
}

TEST(JobShell, RunsTheNodeOfItsRank) {
    const ShellRun zero = run_job_shell(header_for(0));
    EXPECT_EQ(zero.exit_code, 0);
    EXPECT_EQ(what_ran(zero), (std::vector<std::string>{"out 0 task 0 node 0\n", "exit 0 0"}));
    const ShellRun one = run_job_shell(header_for(1));
    EXPECT_EQ(one.exit_code, 0);
    EXPECT_EQ(what_ran(one), (std::vector<std::string>{"out 1 task 1 node 1\n", "exit 1 0"}));
}

TEST(JobShell, RefusesARankOutsideR) {
    const ShellRun run = run_job_shell(header_for(7));
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_EQ(
        what_ran(run),
        (std::vector<std::string>{"msg gantry: job-shell: rank 7 is not among R's ranks (0-1)\n"}));
    Json no_rank = header_for(0);
    no_rank.erase("rank");
    EXPECT_EQ(what_ran(run_job_shell(no_rank)),
              (std::vector<std::string>{
                  "msg gantry: job-shell: the header has no \"rank\" (a broker rank)\n"}));
    Json no_topologies = header_for(0);
    no_topologies.erase("topologies");
    EXPECT_EQ(what_ran(run_job_shell(no_topologies)),
              (std::vector<std::string>{"msg gantry: topologies: expected an array, not null\n"}));
    Json no_map_inputs = header_for(0);
    no_map_inputs.erase("map_inputs");
    EXPECT_EQ(what_ran(run_job_shell(no_map_inputs)),
              (std::vector<std::string>{"msg gantry: map_inputs: expected an object, not null\n"}));
    // Once read as a string whatever it was, which ended the shell on an
    // uncaught exception.
    Json numbered = header_for(0);
    numbered["id"] = 9;
    const ShellRun run_numbered = run_job_shell(numbered);
    EXPECT_EQ(run_numbered.exit_code, 1);
    EXPECT_EQ(
        what_ran(run_numbered),
        (std::vector<std::string>{"msg gantry: job-shell: the header's \"id\" is not a string\n"}));
}

// The shell maps the job with what the broker read (map_inputs), not with
// this host's files and names: a hostfile it has not got, and the name the
// broker gave both nodes, which is no name of this host's.
TEST(JobShell, MapsWithWhatTheBrokerRead) {
    Json header = header_for(1);
    Json spec = header["jobspec"];
    auto jobspec = Jobspec::from_json(spec);
    ASSERT_TRUE(jobspec) << jobspec.error().str();
    jobspec->job.hostfile = "/nonexistent/gantry-hosts";
    header["jobspec"] = jobspec->to_json();
    const std::string host = local_hostname();
    const auto R = ResourceSet::parse(
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"}}],)"
        R"("nodelist":["elsewhere0,elsewhere1"]}})");
    ASSERT_TRUE(R) << R.error().str();
    header["R"] = R->to_json();
    header["map_inputs"] = {
        {"hostname", "broker-host"},
        {"names", Json::array({"localhost"})},
        {"files", Json::array({{{"path", "/nonexistent/gantry-hosts"},
                                {"base64", base64_encode("elsewhere1\nelsewhere0\n")}}})}};
    const ShellRun run = run_job_shell(header);
    EXPECT_EQ(run.exit_code, 0);
    // Rank 1 is elsewhere1, which the hostfile names first: task 0 runs
    // there (node 1 of R).
    EXPECT_EQ(what_ran(run), (std::vector<std::string>{"out 0 task 0 node 1\n", "exit 0 0"}));
}

}  // namespace
}  // namespace gantry::test
