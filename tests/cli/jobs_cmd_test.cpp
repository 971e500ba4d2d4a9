// `gantry jobs -o FORMAT` and `gantry jobs -u USER` / `-A` against a real
// instance: flux's field names and headings, the default table as a format,
// and whose jobs are listed.
#include <unistd.h>

#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/instance.h"
#include "support/machine.h"
#include "support/process.h"

namespace gantry::test {
namespace {

const std::string kUid = std::to_string(::getuid());

class JobsCmd : public InstanceTest {
protected:
    // Jobs 1-4: completed, failed (exit 3), canceled while held, held.
    void SetUp() override {
        InstanceTest::SetUp();
        ASSERT_EQ(submit({"true"}), "1");
        ASSERT_EQ(submit({"-n", "2", "sh", "-c", "exit 3"}), "2");
        ASSERT_EQ(submit({"--urgency", "0", "--job-name", "held", "true"}), "3");
        ASSERT_EQ(submit({"--urgency", "0", "true"}), "4");
        expect({"wait", "1"}, "", "", 0);
        expect({"wait", "2"}, "", "", 3);
        expect({"cancel", "3"}, "", "", 0);
        ASSERT_TRUE(eventually([&] { return state("3") == "INACTIVE"; }));
    }
};

TEST_F(JobsCmd, FormatWithFluxFieldNamesAndHeadings) {
    expect({"jobs", "-a", "-o",
            "{id:>3} {name:<6} {state:<8} {state_single} {status:<9} {status_abbrev:>2} "
            "{result:<9} {result_abbrev:<2} {returncode:>2} {exit_code:>4} {ntasks:>6} "
            "{urgency:>3}"},
           "JOBID NAME   STATE    S STATUS    ST RESULT    RS RC EXIT NTASKS URG\n"
           "    4 true   SCHED    S SCHED      S                           -   0\n"
           "    3 held   INACTIVE I CANCELED  CA CANCELED  CA  -    -      -   0\n"
           "    2 sh     INACTIVE I FAILED     F FAILED    F   3    3      2  16\n"
           "    1 true   INACTIVE I COMPLETED CD COMPLETED CD  0    0      1  16\n",
           "", 0);
}

// The nodes of a job that was allocated some; empty for one that never was.
TEST_F(JobsCmd, NodesOfEachJob) {
    expect({"jobs", "-a", "-o", "{id:>5} {nnodes:>6} {nodelist}"},
           "JOBID NNODES NODELIST\n"
           "    4\n"
           "    3\n"
           "    2      1 " +
               host_name() +
               "\n"
               "    1      1 " +
               host_name() + "\n",
           "", 0);
}

TEST_F(JobsCmd, FormatOfUsersAndExceptions) {
    expect({"jobs", "-a", "-n", "-o", "{userid}"},
           kUid + "\n" + kUid + "\n" + kUid + "\n" + kUid + "\n", "", 0);
    const std::string user = user_name();
    expect({"jobs", "-a", "-n", "-o", "{username}"},
           user + "\n" + user + "\n" + user + "\n" + user + "\n", "", 0);
    // A column is as wide as its heading, with or without the header line.
    expect({"jobs", "-a", "--format", "{exception.occurred}|{exception.type}|{exception.note}"},
           "EXCEPTION-OCCURRED|EXCEPTION-TYPE|EXCEPTION-NOTE\n"
           "False             |              |\n"
           "True              |cancel        |canceled by " +
               kUid +
               "\n"
               "False             |              |\n"
               "False             |              |\n",
           "", 0);
}

TEST_F(JobsCmd, FormatCutsLongValues) {
    expect({"jobs", "-a", "-o", "{name:<3.3+}|{name:.2}|"},
           "NAME|NAME|\ntr+ |tr  |\nhe+ |he  |\nsh  |sh  |\ntr+ |tr  |\n", "", 0);
}

TEST_F(JobsCmd, TimesAreSecondsSinceTheEpoch) {
    const auto result = gantry({"jobs", "-a", "-n", "-o", "{t_submit} {t_inactive}"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 4u) << result.out;
    // An active job has not ended: no T_INACTIVE.
    EXPECT_EQ(lines[0].find(' '), std::string::npos) << lines[0];
    const double submitted = std::stod(lines[3].substr(0, lines[3].find(' ')));
    const double ended = std::stod(lines[3].substr(lines[3].find(' ') + 1));
    EXPECT_GT(submitted, 1.7e9);
    EXPECT_GE(ended, submitted);
    EXPECT_NEAR(info("1")["submit_time"].get<double>(), submitted, 1e-6) << lines[3];
}

TEST_F(JobsCmd, TheDefaultTableIsAFormatToo) {
    const auto table = gantry({"jobs", "-a"});
    const auto formatted =
        gantry({"jobs", "-a", "-o",
                "{id:>5} {username:<8} {name:<10} {status_abbrev:>2} {ntasks:>6} "
                "{contextual_time:>8} {exit_code:>4}"});
    ASSERT_EQ(table.exit_code, 0) << table.err;
    ASSERT_EQ(lines_of(table.out).size(), 5u) << table.out;
    // The same but for the times, which go on.
    const auto without_times = [](const std::string& text) {
        return std::regex_replace(text, std::regex("[0-9.]+[smhd]\\b"), "T");
    };
    EXPECT_EQ(without_times(formatted.out), without_times(table.out));
    EXPECT_EQ(lines_of(table.out)[0], "JOBID USER     NAME       ST NTASKS     TIME EXIT");
}

TEST_F(JobsCmd, UnknownFieldsAreRefusedAtOnce) {
    const std::string known =
        "(known: contextual_time, exception.note, exception.occurred, exception.type, "
        "exit_code, id, name, nnodes, nodelist, ntasks, result, result_abbrev, returncode, "
        "state, state_single, status, status_abbrev, t_inactive, t_submit, urgency, userid, "
        "username)\n";
    expect({"jobs", "-o", "{id} {bogus}"}, "",
           "gantry: jobs: --format: unknown field \"bogus\" " + known, 2);
    // Before the instance is asked: no instance needed.
    expect({"jobs", "--uri", "unix:///nonexistent/socket", "-o", "{runtime:>6}"}, "",
           "gantry: jobs: --format: unknown field \"runtime\" " + known, 2);
    expect({"jobs", "-o", "{id:*}"}, "",
           "gantry: jobs: --format: bad spec of field \"id\" (expected "
           "[[FILL]<|>|^][WIDTH][.PRECISION][+]) at offset 4 in \"{id:*}\"\n",
           2);
    expect({"jobs", "-o", "{id}", "--json"}, "",
           "gantry: jobs: --format and --json do not go together\n", 2);
}

TEST_F(JobsCmd, UserSelectsOneUsersJobs) {
    const std::string mine = "    4\n    3\n    2\n    1\n";
    expect({"jobs", "-a", "-n", "-o", "{id:>5}", "-u", kUid}, mine, "", 0);
    expect({"jobs", "-a", "-n", "-o", "{id:>5}", "-u", user_name()}, mine, "", 0);
    expect({"jobs", "-a", "-n", "-o", "{id:>5}", "-u", "all"}, mine, "", 0);
    expect({"jobs", "-A", "-n", "-o", "{id:>5}"}, mine, "", 0);
    expect({"jobs", "--all-users", "-n", "-o", "{id:>5}"}, mine, "", 0);
    // The default: the caller's active jobs.
    expect({"jobs", "-n", "-o", "{id:>5}"}, "    4\n", "", 0);
    // Only the owner gets into an instance: no one else has jobs here.
    expect({"jobs", "-a", "-u", ::getuid() == 0 ? "1" : "0"},
           "JOBID USER     NAME       ST NTASKS     TIME EXIT\n", "", 0);
    expect({"jobs", "-u", "no-such-user-here"}, "",
           "gantry: jobs: --user: no such user \"no-such-user-here\"\n", 2);
}

}  // namespace
}  // namespace gantry::test
