// `gantry R`: whole outputs and exit codes, including every `flux R` case of
// the conformance vectors (rlist_ops.json, cli_flux_R).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/machine.h"
#include "support/run_command.h"
#include "support/vectors.h"

namespace gantry {
namespace {

using test::CommandResult;
using test::host_name;
using test::run_gantry;

// Runs `gantry R args...`, expecting success, and returns its stdout.
std::string R(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> argv{"R"};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult result = run_gantry(argv, input);
    EXPECT_EQ(result.exit_code, 0) << "gantry R " << args.front() << ": " << result.err;
    EXPECT_EQ(result.err, "");
    return result.out;
}

CommandResult R_result(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> argv{"R"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_gantry(argv, input);
}

// Each `flux R` command line of the vectors, run with `gantry R`; returns what
// the pipeline prints (stdout, or for failures the exit code and stderr).
const std::map<std::string, std::function<std::string()>>& flux_R_cases() {
    static const std::map<std::string, std::function<std::string()>> cases = {
        {"flux R encode | flux R decode --short",
         [] {
             return R({"decode", "--short"}, R({"encode"}));
         }},
        {"flux R encode | flux R decode --count node",
         [] {
             return R({"decode", "--count", "node"}, R({"encode"}));
         }},
        {"flux R encode --ranks 0,2 | flux R decode --ranks",
         [] {
             return R({"decode", "--ranks"}, R({"encode", "--ranks", "0,2"}));
         }},
        {"flux R encode -c 0-1 -r 0-1 | flux R decode -c core",
         [] {
             return R({"decode", "-c", "core"}, R({"encode", "-c", "0-1", "-r", "0-1"}));
         }},
        {"flux R encode --gpus 0 | flux R decode --count core",
         [] {
             return R({"decode", "--count", "core"}, R({"encode", "--gpus", "0"}));
         }},
        {"flux R encode --hosts=foo[0-1] | flux R decode --nodelist",
         [] {
             return R({"decode", "--nodelist"}, R({"encode", "--hosts=foo[0-1]"}));
         }},
        {"flux R encode -r 0-3 -p xx:3-5",
         [] {
             const auto r = R_result({"encode", "-r", "0-3", "-p", "xx:3-5"});
             return std::to_string(r.exit_code) + " " + r.err + r.out;
         }},
        {"flux R encode -r 0-1023 | flux R decode --include 5-7 --short",
         [] {
             return R({"decode", "--include", "5-7", "--short"}, R({"encode", "-r", "0-1023"}));
         }},
        {"flux R encode -r 1-10 | flux R decode --exclude 5-7 --short",
         [] {
             return R({"decode", "--exclude", "5-7", "--short"}, R({"encode", "-r", "1-10"}));
         }},
        {"(flux R encode -r 0-1; flux R encode -r 1-2) | flux R append",
         [] {
             const auto r =
                 R_result({"append"}, R({"encode", "-r", "0-1"}) + R({"encode", "-r", "1-2"}));
             return std::to_string(r.exit_code) + " " + r.err + r.out;
         }},
        {"(flux R encode -r 0-1 -c 0-1; flux R encode -r 1-2 -c 2-3) | flux R append | flux R "
         "decode --short",
         [] {
             return R({"decode", "--short"},
                      R({"append"}, R({"encode", "-r", "0-1", "-c", "0-1"}) +
                                        R({"encode", "-r", "1-2", "-c", "2-3"})));
         }},
        {"(flux R encode -r 0-1 -c 0-1; flux R encode -r 2-3 -c 0-1 -g 0-1) | flux R append | "
         "flux R decode --short",
         [] {
             return R({"decode", "--short"},
                      R({"append"}, R({"encode", "-r", "0-1", "-c", "0-1"}) +
                                        R({"encode", "-r", "2-3", "-c", "0-1", "-g", "0-1"})));
         }},
        {"(flux R encode -r 0-1 -c 0-1; flux R encode -r 0-1 -c 0) | flux R diff | flux R decode "
         "--short",
         [] {
             return R({"decode", "--short"},
                      R({"diff"}, R({"encode", "-r", "0-1", "-c", "0-1"}) +
                                      R({"encode", "-r", "0-1", "-c", "0"})));
         }},
        {"(flux R encode -r 0-3 -c 0-1; flux R encode -r 1-5 -c 0) | flux R intersect | flux R "
         "decode --short",
         [] {
             return R({"decode", "--short"},
                      R({"intersect"}, R({"encode", "-r", "0-3", "-c", "0-1"}) +
                                           R({"encode", "-r", "1-5", "-c", "0"})));
         }},
        {"(flux R encode -r 0-3 -c 0-1; flux R encode -r 4-5 -c 0) | flux R intersect | flux R "
         "decode --short",
         [] {
             return R({"decode", "--short"},
                      R({"intersect"}, R({"encode", "-r", "0-3", "-c", "0-1"}) +
                                           R({"encode", "-r", "4-5", "-c", "0"})));
         }},
        {"(flux R encode -r 1-10 -c 0-3; flux R encode -r 0 -c 0-3) | flux R verify",
         [] {
             const auto r = R_result({"verify"}, R({"encode", "-r", "1-10", "-c", "0-3"}) +
                                                     R({"encode", "-r", "0", "-c", "0-3"}));
             return std::to_string(r.exit_code) + " " + r.err + r.out;
         }},
        {"(flux R encode -r 1 -c 0-3; flux R encode -r 1 -c 0-2) | flux R verify",
         [] {
             const auto r = R_result({"verify"}, R({"encode", "-r", "1", "-c", "0-3"}) +
                                                     R({"encode", "-r", "1", "-c", "0-2"}));
             return std::to_string(r.exit_code) + " " + r.err + r.out;
         }},
        {"(flux R encode -r 1 -c 0-3; flux R encode -r 1 -c 0-7 -g 1) | flux R verify",
         [] {
             const auto r =
                 R_result({"verify"}, R({"encode", "-r", "1", "-c", "0-3"}) +
                                          R({"encode", "-r", "1", "-c", "0-7", "-g", "1"}));
             return std::to_string(r.exit_code) + " " + r.err + r.out;
         }},
        {"flux R encode --hosts=foo[0-1] --gpus 0 --cores 0-1 --property xx:0 --property yy:1 "
         "--property all | flux R decode -c node --properties all,yy",
         [] {
             return R({"decode", "-c", "node", "--properties", "all,yy"},
                      R({"encode", "--hosts=foo[0-1]", "--gpus", "0", "--cores", "0-1",
                         "--property", "xx:0", "--property", "yy:1", "--property", "all"}));
         }},
        {"... | flux R decode --nodelist --properties ^yy",
         [] {
             return R({"decode", "--nodelist", "--properties", "^yy"},
                      R({"encode", "--hosts=foo[0-1]", "--gpus", "0", "--cores", "0-1",
                         "--property", "xx:0", "--property", "yy:1", "--property", "all"}));
         }},
    };
    return cases;
}

const std::map<std::string, std::string> kFluxROutputs = {
    {"flux R encode | flux R decode --short", "rank0/core0\n"},
    {"flux R encode | flux R decode --count node", "1\n"},
    {"flux R encode --ranks 0,2 | flux R decode --ranks", "0,2\n"},
    {"flux R encode -c 0-1 -r 0-1 | flux R decode -c core", "4\n"},
    {"flux R encode --gpus 0 | flux R decode --count core", "0\n"},
    {"flux R encode --hosts=foo[0-1] | flux R decode --nodelist", "foo[0-1]\n"},
    {"flux R encode -r 0-3 -p xx:3-5", "2 gantry: R: property \"xx\": ranks 4-5 not in R\n"},
    {"flux R encode -r 0-1023 | flux R decode --include 5-7 --short", "rank[5-7]/core0\n"},
    {"flux R encode -r 1-10 | flux R decode --exclude 5-7 --short", "rank[1-4,8-10]/core0\n"},
    {"(flux R encode -r 0-1; flux R encode -r 1-2) | flux R append",
     "2 gantry: R: append: rank 1 has core0 in both sets\n"},
    {"(flux R encode -r 0-1 -c 0-1; flux R encode -r 1-2 -c 2-3) | flux R append | flux R "
     "decode --short",
     "rank0/core[0-1] rank1/core[0-3] rank2/core[2-3]\n"},
    {"(flux R encode -r 0-1 -c 0-1; flux R encode -r 2-3 -c 0-1 -g 0-1) | flux R append | "
     "flux R decode --short",
     "rank[0-1]/core[0-1] rank[2-3]/core[0-1],gpu[0-1]\n"},
    {"(flux R encode -r 0-1 -c 0-1; flux R encode -r 0-1 -c 0) | flux R diff | flux R decode "
     "--short",
     "rank[0-1]/core1\n"},
    {"(flux R encode -r 0-3 -c 0-1; flux R encode -r 1-5 -c 0) | flux R intersect | flux R "
     "decode --short",
     "rank[1-3]/core0\n"},
    {"(flux R encode -r 0-3 -c 0-1; flux R encode -r 4-5 -c 0) | flux R intersect | flux R "
     "decode --short",
     "\n"},
    {"(flux R encode -r 1-10 -c 0-3; flux R encode -r 0 -c 0-3) | flux R verify",
     "1 gantry: R: verify: rank 0 not found in expected ranks\n"},
    {"(flux R encode -r 1 -c 0-3; flux R encode -r 1 -c 0-2) | flux R verify",
     "1 gantry: R: verify: rank 1 (HOST) missing resources: core3\n"},
    {"(flux R encode -r 1 -c 0-3; flux R encode -r 1 -c 0-7 -g 1) | flux R verify",
     "0 gantry: R: verify: rank 1 (HOST) has extra resources: core[4-7],gpu1\n"},
    {"flux R encode --hosts=foo[0-1] --gpus 0 --cores 0-1 --property xx:0 --property yy:1 "
     "--property all | flux R decode -c node --properties all,yy",
     "1\n"},
    {"... | flux R decode --nodelist --properties ^yy", "foo0\n"},
};

std::string with_host(std::string text) {
    for (auto at = text.find("HOST"); at != std::string::npos; at = text.find("HOST"))
        text.replace(at, 4, host_name());
    return text;
}

TEST(RCommand, FluxRCases) {
    for (const auto& [cmd, expected] : kFluxROutputs)
        EXPECT_EQ(flux_R_cases().at(cmd)(), with_host(expected)) << cmd;
}

TEST(RCommand, FluxRVectors) {
    GANTRY_REQUIRE_VECTORS();
    const Json ops = test::load_vector_json("rlist_ops.json");
    std::vector<Json> records(ops["cli_flux_R"].begin(), ops["cli_flux_R"].end());
    for (const auto& section : {"remap", "rerank"})
        for (const auto& record : ops[section])
            if (record.contains("cli"))
                records.push_back({{"cmd", record["cli"]}, {"stdout", record["stdout"]}});
    int checked = 0;
    for (const auto& record : records) {
        const std::string cmd = record["cmd"];
        const std::string stdout_text = record["stdout"];
        if (cmd.find("--xml=t/hwloc-data") != std::string::npos ||
            cmd.find("parse-config") != std::string::npos)
            continue;  // flux-core's own files and config: RCommand.Xml,
                       // RCommand.ParseConfigIsNotOurs
        if (cmd.find("remap") != std::string::npos) {
            EXPECT_EQ(R({"decode", "-s"}, R({"remap"}, R({"encode", "-r", "5,99,1000"}))),
                      stdout_text + "\n");
        } else if (cmd.find("rerank") != std::string::npos) {
            EXPECT_EQ(R({"decode", "--nodelist"}, R({"rerank", "foo[3,2,1,0]"},
                                                    R({"encode", "-r", "0-3", "-H", "foo[0-3]"}))),
                      stdout_text + "\n");
        } else {
            ASSERT_TRUE(flux_R_cases().contains(cmd)) << cmd;
            const std::string ours = flux_R_cases().at(cmd)();
            if (stdout_text.starts_with("<error") || stdout_text.starts_with("<fails"))
                EXPECT_TRUE(ours.starts_with("2 gantry: R: ") || ours.starts_with("1 gantry: R: "))
                    << cmd << ": " << ours;
            else if (stdout_text.starts_with("<succeeds"))
                EXPECT_TRUE(ours.starts_with("0 gantry: R: verify: ")) << cmd << ": " << ours;
            else
                EXPECT_EQ(ours, stdout_text + "\n") << cmd;
        }
        ++checked;
    }
    EXPECT_EQ(checked, 22);
}

TEST(RCommand, ParseConfigIsNotOurs) {
    const auto r = R_result({"parse-config"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
}

TEST(RCommand, EncodeWritesCompactR) {
    EXPECT_EQ(
        R({"encode", "-r", "0-3", "-c", "0-3", "-g", "0", "-H", "foo[0-3]", "-p", "xx:1", "-p",
           "all"}),
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0-3","gpu":"0"}}],)"
        R"("nodelist":["foo[0-3]"],"properties":{"all":"0-3","xx":"1"},"starttime":0.0,)"
        R"("expiration":0.0}})"
        "\n");
    EXPECT_EQ(
        R({"encode", "-r", "0-1"}),
        R"({"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"}}],"nodelist":[")" +
            host_name() + "," + host_name() + R"("],"starttime":0.0,"expiration":0.0}})" + "\n");
    EXPECT_EQ(R({"decode", "--ranks", "--nodelist"}, R({"encode", "-H", "a,b,c"})), "a,b,c\n0-2\n");
}

TEST(RCommand, DecodeUnionAndPassThrough) {
    const std::string doc =
        R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-1"}}],"nodelist":["n0"]},)"
        R"("scheduling":{"writer":"fluxion"},"attributes":{"system":{"queue":"batch"}}})";
    // One document passes through decode with its scheduling key.
    EXPECT_EQ(
        R({"decode"}, doc),
        R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-1"}}],)"
        R"("nodelist":["n0"],"starttime":0.0,"expiration":0.0},"scheduling":{"writer":"fluxion"},)"
        R"("attributes":{"system":{"queue":"batch"}}})"
        "\n");
    // A union is a new set: scheduling is dropped.
    EXPECT_EQ(R({"decode"}, doc + R({"encode", "-r", "1", "-H", "n1"})),
              R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-1"}},)"
              R"({"rank":"1","children":{"core":"0"}}],"nodelist":["n[0-1]"],"starttime":0.0,)"
              R"("expiration":0.0},"attributes":{"system":{"queue":"batch"}}})"
              "\n");
    EXPECT_EQ(R({"decode", "-s", "-n", "-r", "-c", "gpu"},
                R({"encode", "-r", "0-3", "-g", "0-1", "-H", "x[1-4]"})),
              "rank[0-3]/gpu[0-1]\nx[1-4]\n0-3\n8\n");
}

TEST(RCommand, ReadsFiles) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("gantry-rset-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "a.json") << R({"encode", "-r", "0-1", "-c", "0-3"});
    std::ofstream(dir / "b.json") << R({"encode", "-r", "1", "-c", "2-3"});
    std::ofstream(dir / "bad.json")
        << R"({"version":1,"execution":{"R_lite":[{"rank":"3,2","children":{}}]}})";
    EXPECT_EQ(R({"diff", (dir / "a.json").string(), (dir / "b.json").string()}).size() > 0, true);
    EXPECT_EQ(R({"decode", "-s", (dir / "a.json").string(), (dir / "b.json").string()}),
              "rank[0-1]/core[0-3]\n");
    const auto bad = R_result({"decode", (dir / "bad.json").string()});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_EQ(bad.out, "");
    EXPECT_EQ(bad.err, "gantry: R: " + (dir / "bad.json").string() +
                           ": execution.R_lite[0].rank: ids out of order at offset 2 in \"3,2\"\n");
    const auto missing = R_result({"decode", (dir / "none.json").string()});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(missing.err, "gantry: R: cannot read " + (dir / "none.json").string() +
                               ": No such file or directory\n");
    std::filesystem::remove_all(dir);
}

TEST(RCommand, CombiningSubcommands) {
    const std::string four = R({"encode", "-r", "0-3", "-c", "0-3", "-H", "foo[0-3]"});
    EXPECT_EQ(R({"decode", "-s"}, R({"remap"}, R({"encode", "-r", "5,9", "-c", "4-7", "-g", "2"}))),
              "rank[0-1]/core[0-3],gpu2\n");
    EXPECT_EQ(R({"decode", "-n", "-r"}, R({"rerank", "foo[2,0,3,1]"}, four)),
              "foo[2,0,3,1]\n0-3\n");
    EXPECT_EQ(R({"decode", "-p", "gpu", "-r"}, R({"set-property", "gpu:0-1", "login:0"}, four)),
              "0-1\n");
    EXPECT_EQ(R({"decode", "-p", "foo2", "-s"}, four), "rank2/core[0-3]\n");
    EXPECT_EQ(R({"verify", "--config", R"({"core":"allow-missing"})"},
                four + R({"encode", "-r", "2", "-c", "0", "-H", "foo2"})),
              "");
}

struct BadCase {
    std::vector<std::string> args;
    std::string input;
    int exit_code;
    std::string err;
};

TEST(RCommand, BadInput) {
    const std::string four = R({"encode", "-r", "0-3", "-H", "foo[0-3]"});
    const BadCase cases[] = {
        {{"decode"}, "", 2, "gantry: R: no R document on stdin\n"},
        {{"decode"}, "{", 2, "gantry: R: invalid JSON at offset 1 in \"{\"\n"},
        {{"decode"},
         R"({"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"3,2"}}]}})",
         2,
         "gantry: R: execution.R_lite[0].children.core: ids out of order at offset 2 in \"3,2\"\n"},
        {{"decode", "--count", "socket"},
         four,
         2,
         "gantry: R: --count: unknown resource type \"socket\" (expected node, core or gpu)\n"},
        {{"decode", "--include", "x"},
         four,
         2,
         "gantry: R: --include: expected an id, found 'x' at offset 0 in \"x\"\n"},
        {{"decode", "--properties", "a|b"},
         four,
         2,
         "gantry: R: invalid character '|' in property name \"a|b\"\n"},
        {{"encode", "-r", "0-1", "-H", "a[0-2]"},
         "",
         2,
         "gantry: R: encode: --hosts names 3 hosts for 2 ranks\n"},
        {{"encode", "-r", "0-2147483647"}, "", 2, "gantry: R: encode: more than 1048576 ranks\n"},
        {{"encode", "--local", "-c", "0"},
         "",
         2,
         "gantry: R: encode: --cores and --gpus do not go with --local or --xml\n"},
        {{"encode", "-p", "fo^o"},
         "",
         2,
         "gantry: R: invalid character '^' in property name \"fo^o\"\n"},
        {{"diff"}, four, 2, "gantry: R: diff needs at least 2 R documents, got 1\n"},
        {{},
         "",
         2,
         "gantry: R: missing subcommand: one of encode, decode, append, diff, intersect, remap, "
         "rerank, verify, set-property (see gantry R --help)\n"},
        {{"foo"},
         "",
         2,
         "gantry: R: unknown subcommand \"foo\": one of encode, decode, append, diff, intersect, "
         "remap, rerank, verify, set-property (see gantry R --help)\n"},
        {{"verify"},
         four,
         2,
         "gantry: R: verify needs exactly 2 R documents (expected, then actual), got 1\n"},
        {{"rerank", "foo[0-2]"}, four, 2, "gantry: R: rerank: 3 hosts given for 4 ranks\n"},
        {{"rerank", "foo[1-4]"}, four, 2, "gantry: R: rerank: host foo4 not in R\n"},
        {{"set-property", "x:7"}, four, 2, "gantry: R: property \"x\": ranks 7 not in R\n"},
        {{"append"}, four + four, 2, "gantry: R: append: rank 0 has core0 in both sets\n"},
    };
    for (const auto& c : cases) {
        const auto r = R_result(c.args, c.input);
        EXPECT_EQ(r.exit_code, c.exit_code) << c.args.front() << " " << c.input;
        EXPECT_EQ(r.out, "") << c.args.front();
        EXPECT_EQ(r.err, c.err) << c.args.front() << " " << c.input;
    }
}

TEST(RCommand, HelpHasExamples) {
    for (const std::string sub : {"", "encode", "decode", "append", "diff", "intersect", "remap",
                                  "rerank", "verify", "set-property"}) {
        const auto r = sub.empty() ? R_result({"--help"}) : R_result({sub, "--help"});
        EXPECT_EQ(r.exit_code, 0) << sub;
        EXPECT_NE(r.out.find("Examples:\n  $ "), std::string::npos) << sub << r.out;
        EXPECT_NE(r.out.find("Usage: gantry R " + sub), std::string::npos) << sub << r.out;
    }
}

TEST(RCommand, Xml) {
    // A synthetic topology written by hwloc's lstopo, when it is installed.
    const auto xml = std::filesystem::temp_directory_path() /
                     ("gantry-rset-" + std::to_string(getpid()) + ".xml");
    const auto lstopo = test::run_program(
        {"lstopo-no-graphics", "-i", "package:2 core:22 pu:4", "--of", "xml", xml.string()});
    if (lstopo.exit_code != 0)
        GTEST_SKIP() << "lstopo-no-graphics is not installed";
    EXPECT_EQ(R({"decode", "--short"}, R({"encode", "--xml", xml.string()})), "rank0/core[0-43]\n");
    EXPECT_EQ(R({"decode", "--nodelist"}, R({"encode", "-f", xml.string(), "-H", "sierra1"})),
              "sierra1\n");
    std::filesystem::remove(xml);
    const auto missing = R_result({"encode", "--xml", "/nonexistent.xml"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(missing.out, "");
    // --local describes this machine: at least one core.
    const auto local = run_gantry({"R", "encode", "--local"});
    EXPECT_EQ(local.exit_code, 0) << local.err;
    EXPECT_NE(R({"decode", "--short"}, local.out).find("rank0/core"), std::string::npos);
}

}  // namespace
}  // namespace gantry
