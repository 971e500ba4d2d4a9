// `gantry run` and `gantry submit` with Open MPI's output options, real
// tasks: --timestamp-output, --output-filename and --merge-stderr-to-stdout.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "support/instance.h"
#include "support/run_command.h"
#include "support/scratch.h"

namespace gantry::test {
namespace {

using Lines = std::vector<std::string>;

Lines sorted(Lines lines) {
    std::sort(lines.begin(), lines.end());
    return lines;
}

// Every file and directory under `dir`, relative to it, sorted.
Lines tree(const std::string& dir) {
    Lines paths;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
        paths.push_back(std::filesystem::relative(entry.path(), dir).string());
    std::sort(paths.begin(), paths.end());
    return paths;
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
}

// ctime(3)'s text of `when`, without its newline: an implementation of the
// layout other than gantry's.
std::string ctime_of(std::time_t when) {
    std::string text = std::ctime(&when);
    text.pop_back();
    return text;
}

// Splits "<time><stream>:rest" at the end of the time, which must be one
// of the seconds from `first` to `last`.
void expect_stamped(const std::string& line, std::time_t first, std::time_t last,
                    const std::string& rest) {
    static const std::regex kStamp(
        R"(([A-Z][a-z]{2} [A-Z][a-z]{2} [ 123][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9] [0-9]{4})(.*))");
    std::smatch match;
    ASSERT_TRUE(std::regex_match(line, match, kStamp)) << line;
    EXPECT_EQ(match[2].str(), rest) << line;
    Lines seconds;
    for (std::time_t t = first; t <= last; ++t)
        seconds.push_back(ctime_of(t));
    EXPECT_NE(std::find(seconds.begin(), seconds.end(), match[1].str()), seconds.end()) << line;
}

const std::string kOutErrOut = "echo o1; echo e1 >&2; echo o2; echo e2 >&2; echo o3";

}  // namespace

// Open MPI's layout: the time (ctime's) and the stream, then the label.
TEST(RunOutput, TimestampBeforeEveryLineAndLabel) {
    const std::time_t before = std::time(nullptr);
    const auto result =
        run_gantry({"run", "-n", "2", "--timestamp-output", "--label-io", "sh", "-c",
                    "echo out $GANTRY_TASK_RANK; echo err >&2; printf 'a\\nb\\n'"});
    const std::time_t after = std::time(nullptr);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    Lines out = sorted(lines_of(result.out));
    ASSERT_EQ(out.size(), 6u) << result.out;
    Lines rests;
    for (const std::string& line : out) {
        ASSERT_GT(line.size(), 24u) << line;
        rests.push_back(line.substr(24));
        expect_stamped(line, before, after, line.substr(24));
    }
    EXPECT_EQ(sorted(rests), (Lines{"<stdout>:0: a", "<stdout>:0: b", "<stdout>:0: out 0",
                                    "<stdout>:1: a", "<stdout>:1: b", "<stdout>:1: out 1"}));
    const Lines err = lines_of(result.err);
    ASSERT_EQ(err.size(), 2u) << result.err;
    expect_stamped(err[0], before, after, err[0] < err[1] ? "<stderr>:0: err" : "<stderr>:1: err");
    expect_stamped(err[1], before, after, err[0] < err[1] ? "<stderr>:1: err" : "<stderr>:0: err");
}

TEST(RunOutput, TimestampWithoutLabel) {
    const std::time_t before = std::time(nullptr);
    const auto result = run_gantry({"run", "-n", "1", "--timestamp-output", "echo", "hi"});
    const std::time_t after = std::time(nullptr);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    const Lines out = lines_of(result.out);
    ASSERT_EQ(out.size(), 1u) << result.out;
    expect_stamped(out[0], before, after, "<stdout>:hi");
}

// Open MPI 4.1's layout: DIR/JOBID/rank.N/{stdout,stderr}, N zero-padded
// to the digits of the job's size; the terminal still gets a copy.
TEST(RunOutput, OutputFilenameWritesEachRanksFiles) {
    const ScratchDir dir;
    const auto result =
        run_gantry({"run", "-n", "12", "--oversubscribe", "--output-filename", dir / "out:nojobid",
                    "sh", "-c", "echo out $GANTRY_TASK_RANK; echo err $GANTRY_TASK_RANK >&2"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    Lines expected_tree;
    Lines copied_out;
    Lines copied_err;
    for (int rank = 0; rank < 12; ++rank) {
        const std::string name = std::string(rank < 10 ? "rank.0" : "rank.") + std::to_string(rank);
        expected_tree.insert(expected_tree.end(), {name, name + "/stderr", name + "/stdout"});
        EXPECT_EQ(read_file(dir / "out/" + name + "/stdout"), "out " + std::to_string(rank) + "\n");
        EXPECT_EQ(read_file(dir / "out/" + name + "/stderr"), "err " + std::to_string(rank) + "\n");
        copied_out.push_back("out " + std::to_string(rank));
        copied_err.push_back("err " + std::to_string(rank));
    }
    EXPECT_EQ(tree(dir / "out"), sorted(expected_tree));
    EXPECT_EQ(sorted(lines_of(result.out)), sorted(copied_out));
    EXPECT_EQ(sorted(lines_of(result.err)), sorted(copied_err));
}

// The job's id names the directory between DIR and the ranks; nocopy
// keeps the output off the terminal; the files get the labels.
TEST(RunOutput, OutputFilenameUnderTheJobsIdWithoutCopy) {
    const ScratchDir dir;
    const auto result = run_gantry(
        {"run", "-n", "2", "--label-io", "--umask", "027", "--output-filename", dir / "a/b:nocopy",
         "sh", "-c", "echo $GANTRY_JOB_ID; echo e >&2; echo \"$GANTRY_JOB_ID\" > " + dir / "id"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "");
    std::string id = read_file(dir / "id");
    ASSERT_FALSE(id.empty());
    id.pop_back();
    EXPECT_EQ(tree(dir / "a"),
              (Lines{"b", "b/" + id, "b/" + id + "/rank.0", "b/" + id + "/rank.0/stderr",
                     "b/" + id + "/rank.0/stdout", "b/" + id + "/rank.1",
                     "b/" + id + "/rank.1/stderr", "b/" + id + "/rank.1/stdout"}));
    EXPECT_EQ(read_file(dir / "a/b/" + id + "/rank.1/stdout"), "1: " + id + "\n");
    EXPECT_EQ(read_file(dir / "a/b/" + id + "/rank.1/stderr"), "1: e\n");
    // 0755 and 0666 less the job's umask.
    EXPECT_EQ(mode_of(dir / "a"), 0750u);
    EXPECT_EQ(mode_of(dir / "a/b/" + id + "/rank.0"), 0750u);
    EXPECT_EQ(mode_of(dir / "a/b/" + id + "/rank.0/stdout"), 0640u);
}

TEST(RunOutput, OutputFilenameThatCannotBeMadeStopsEverything) {
    const ScratchDir dir;
    { std::ofstream(dir / "file") << "x\n"; }
    expect_gantry(
        {"run", "-n", "1", "--output-filename", dir / "file", "touch", dir / "started"}, "", "",
        "gantry: --output-filename: cannot create \"" + dir / "file" + "\": File exists\n", 1);
    expect_gantry(
        {"run", "-n", "1", "--output-filename", dir / "file/sub:nojobid", "touch", dir / "started"},
        "", "", "gantry: --output-filename: cannot create \"" + dir / "file" + "\": File exists\n",
        1);
    EXPECT_FALSE(exists(dir / "started"));
    expect_gantry({"run", "-n", "1", "--output-filename", "out:nocopy,jobid", "true"}, "", "",
                  "gantry: run: --output-filename: unknown qualifier \"jobid\" (nojobid, "
                  "nocopy) in \"out:nocopy,jobid\"\n",
                  2);
    expect_gantry({"run", "-n", "1", "--output-filename", ":nocopy", "true"}, "", "",
                  "gantry: run: --output-filename needs a directory in \":nocopy\"\n", 2);
    expect_gantry({"run", "-n", "1", "--output-filename"}, "", "",
                  "gantry: run: --output-filename needs a value\n", 2);
}

// One pipe for both: the lines keep the order the task wrote them in.
TEST(RunOutput, MergedStderrKeepsTheOrderOfWrites) {
    for (int round = 0; round < 5; ++round)
        expect_gantry({"run", "-n", "1", "--merge-stderr-to-stdout", "sh", "-c", kOutErrOut}, "",
                      "o1\ne1\no2\ne2\no3\n", "", 0);
    expect_gantry({"run", "-n", "1", "--merge-stderr-to-stdout", "--label-io", "sh", "-c",
                   "echo o; echo e >&2"},
                  "", "0: o\n0: e\n", "", 0);
}

TEST(RunOutput, MergedStderrGoesToTheOutputFiles) {
    const ScratchDir dir;
    expect_gantry({"run", "-n", "1", "--merge-stderr-to-stdout", "-o", dir / "o", "-e", dir / "e",
                   "sh", "-c", kOutErrOut},
                  "", "", "", 0);
    EXPECT_EQ(read_file(dir / "o"), "o1\ne1\no2\ne2\no3\n");
    EXPECT_FALSE(exists(dir / "e"));
    expect_gantry({"run", "-n", "1", "--merge-stderr-to-stdout", "--output-filename",
                   dir / "d:nojobid", "sh", "-c", kOutErrOut},
                  "", "o1\ne1\no2\ne2\no3\n", "", 0);
    EXPECT_EQ(tree(dir / "d"), (Lines{"rank.0", "rank.0/stdout"}));
    EXPECT_EQ(read_file(dir / "d/rank.0/stdout"), "o1\ne1\no2\ne2\no3\n");
}

// The job shell under an instance reads the same jobspec.
TEST(RunOutput, InAnInstance) {
    const ScratchDir dir;
    const DaemonInstance instance(dir / "state");
    ASSERT_TRUE(instance.ok());
    instance.expect({"run", "-n", "1", "--merge-stderr-to-stdout", "sh", "-c", kOutErrOut},
                    "o1\ne1\no2\ne2\no3\n", "", 0);
    const std::string id =
        instance.submit({"-n", "2", "--output-filename", dir / "out:nocopy", "sh", "-c",
                         "echo out $GANTRY_TASK_RANK; echo err >&2"});
    instance.expect({"wait", id}, "", "", 0);
    EXPECT_EQ(read_file(dir / "out/" + id + "/rank.1/stdout"), "out 1\n");
    EXPECT_EQ(read_file(dir / "out/" + id + "/rank.0/stderr"), "err\n");
    instance.expect({"attach", id}, "", "", 0);

    const std::time_t before = std::time(nullptr);
    const auto stamped = instance.gantry(
        {"run", "-n", "2", "--timestamp-output", "--label-io", "sh", "-c", "echo hi >&2"});
    const std::time_t after = std::time(nullptr);
    ASSERT_EQ(stamped.exit_code, 0) << stamped.err;
    EXPECT_EQ(stamped.out, "");
    const Lines err = sorted(lines_of(stamped.err));
    ASSERT_EQ(err.size(), 2u) << stamped.err;
    Lines rests;
    for (const std::string& line : err) {
        ASSERT_GT(line.size(), 24u) << line;
        rests.push_back(line.substr(24));
        expect_stamped(line, before, after, line.substr(24));
    }
    EXPECT_EQ(sorted(rests), (Lines{"<stderr>:0: hi", "<stderr>:1: hi"}));
}

}  // namespace gantry::test
