// The jobspec: defaults, the exact emission, round trips of full and MPMD
// documents, an embedded R, and every violation with its one message.
#include "formats/jobspec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gantry {
namespace {

using EnvRule = Jobspec::EnvRule;
using Dependency = Jobspec::Dependency;

Jobspec parse_ok(std::string_view text) {
    auto spec = Jobspec::parse(text);
    EXPECT_TRUE(spec.ok()) << text << ": " << (spec.ok() ? "" : spec.error().str());
    return spec.ok() ? *spec : Jobspec{};
}

Jobspec::App app_of(std::vector<std::string> command) {
    Jobspec::App app;
    app.command = std::move(command);
    return app;
}

// parse(encode(x)) == x, and the text is stable.
void expect_round_trip(const Jobspec& spec) {
    const std::string encoded = spec.encode();
    const Jobspec again = parse_ok(encoded);
    EXPECT_EQ(again, spec) << encoded;
    EXPECT_EQ(again.encode(), encoded);
    EXPECT_EQ(Jobspec::from_json(spec.to_json()).value(), spec) << encoded;
}

// Every key with its default, in the documented order.
constexpr std::string_view kJobDefaults =
    R"("job":{"hosts":"","hostfile":"","rankfile":"","topology":"","oversubscribe":false,)"
    R"("nolocal":false,"hwthread_cpus":false,"display":[]})";
constexpr std::string_view kResourcesDefaults =
    R"("resources":{"nodes":0,"ntasks":0,"cores_per_task":1,"gpus_per_task":0,)"
    R"("exclusive":false,"constraint":{},"R":null})";

TEST(Jobspec, MinimalDocumentGetsEveryDefault) {
    const Jobspec spec = parse_ok(R"({"version":1,"apps":[{"command":["true"]}]})");
    ASSERT_EQ(spec.apps.size(), 1u);
    const Jobspec::App& app = spec.apps[0];
    EXPECT_EQ(app.command, std::vector<std::string>{"true"});
    EXPECT_EQ(app.ntasks, 0u);
    EXPECT_EQ(app.map_by, "");
    EXPECT_EQ(app.rank_by, "");
    EXPECT_EQ(app.bind_to, "");
    EXPECT_EQ(app.hosts, "");
    EXPECT_EQ(app.hostfile, "");
    EXPECT_TRUE(app.env.empty());
    EXPECT_EQ(app.cwd, "");
    EXPECT_EQ(spec.job, Jobspec::Job{});
    EXPECT_FALSE(spec.job.oversubscribe);
    EXPECT_TRUE(spec.job.display.empty());
    EXPECT_EQ(spec.resources.nodes, 0u);
    EXPECT_EQ(spec.resources.ntasks, 0u);
    EXPECT_EQ(spec.resources.cores_per_task, 1u);
    EXPECT_EQ(spec.resources.gpus_per_task, 0u);
    EXPECT_FALSE(spec.resources.exclusive);
    EXPECT_FALSE(spec.resources.R.has_value());
    const Jobspec::Attributes& attributes = spec.attributes;
    EXPECT_EQ(attributes.name, "");
    EXPECT_EQ(attributes.cwd, "");
    EXPECT_TRUE(attributes.environment.empty());
    EXPECT_EQ(attributes.time_limit, 0.0);
    EXPECT_EQ(attributes.kill_timeout, 5.0);
    EXPECT_FALSE(attributes.kill_on_bad_exit);
    EXPECT_EQ(attributes.urgency, 16);
    EXPECT_EQ(attributes.begin_time, 0.0);
    EXPECT_TRUE(attributes.dependencies.empty());
    EXPECT_FALSE(attributes.label_io);
    EXPECT_EQ(attributes.output, "");
    EXPECT_EQ(attributes.error, "");
    EXPECT_EQ(attributes.input, "");
    EXPECT_FALSE(attributes.unbuffered);
    EXPECT_TRUE(attributes.rlimits.empty());
    EXPECT_EQ(attributes.umask, "");
    EXPECT_EQ(attributes.mpi, "");

    // Empty objects and a value built in code are the same jobspec.
    Jobspec built;
    built.apps.push_back(app_of({"true"}));
    EXPECT_EQ(spec, built);
    EXPECT_EQ(parse_ok(R"({"version":1,"apps":[{"command":["true"],"env":[]}],"job":{},)"
                       R"("resources":{},"attributes":{}})"),
              spec);

    EXPECT_EQ(
        spec.encode(),
        std::string(R"({"version":1,"apps":[{"command":["true"],"ntasks":0,"map_by":"",)"
                    R"("rank_by":"","bind_to":"","hosts":"","hostfile":"","env":[],)"
                    R"("cwd":""}],)") +
            std::string(kJobDefaults) + "," + std::string(kResourcesDefaults) +
            R"(,"attributes":{"name":"","cwd":"","environment":{},"time_limit":0,)"
            R"("kill_timeout":5,"kill_on_bad_exit":false,"urgency":16,"begin_time":0,)"
            R"("dependencies":[],"label_io":false,"output":"","error":"","input":"",)"
            R"("unbuffered":false,"timestamp_output":false,"output_dir":"","merge_stderr":false,)"
            R"("rlimits":[],"umask":"","mpi":""}})");
    expect_round_trip(spec);
}

TEST(Jobspec, SmallDocumentEncodesExactly) {
    Jobspec spec;
    Jobspec::App app = app_of({"./a", "x"});
    app.ntasks = 2;
    app.map_by = "core";
    app.env = {{EnvRule::Kind::kSet, "A=1"}, {EnvRule::Kind::kRemove, "X*"}};
    spec.apps.push_back(app);
    spec.attributes.name = "a";
    spec.attributes.environment = {{"PATH", "/bin"}, {"HOME", "/home/u"}};
    spec.attributes.time_limit = 90.5;
    spec.attributes.urgency = Jobspec::kUrgencyHold;
    spec.attributes.dependencies = {{Dependency::Type::kAfterAny, 12}};
    EXPECT_EQ(spec.encode(),
              std::string(R"({"version":1,"apps":[{"command":["./a","x"],"ntasks":2,)"
                          R"("map_by":"core","rank_by":"","bind_to":"","hosts":"","hostfile":"",)"
                          R"("env":[{"set":"A=1"},{"remove":"X*"}],"cwd":""}],)") +
                  std::string(kJobDefaults) + "," + std::string(kResourcesDefaults) +
                  R"(,"attributes":{"name":"a","cwd":"","environment":{"HOME":"/home/u",)"
                  R"("PATH":"/bin"},"time_limit":90.5,"kill_timeout":5,"kill_on_bad_exit":false,)"
                  R"("urgency":0,"begin_time":0,"dependencies":[{"type":"afterany","id":12}],)"
                  R"("label_io":false,"output":"","error":"","input":"","unbuffered":false,)"
                  R"("timestamp_output":false,"output_dir":"","merge_stderr":false,)"
                  R"("rlimits":[],"umask":"","mpi":""}})");
    expect_round_trip(spec);
}

// Every key with a value other than its default.
constexpr std::string_view kFullDocument = R"({
  "version": 1,
  "apps": [
    {"command": ["./a", "x"], "ntasks": 2, "map_by": "core:PE=2", "rank_by": "span",
     "bind_to": "core:overload-allowed", "hosts": "", "hostfile": "",
     "env": [{"set": "A=1"}, {"remove": "X*"}, {"file": "a.env"}], "cwd": "/tmp"},
    {"command": ["./b"], "ntasks": 4294967295, "map_by": "package", "rank_by": "fill",
     "bind_to": "none", "hosts": "+n1,+e:2", "hostfile": "b.hosts", "env": [{"set": "B"}],
     "cwd": "/b"}
  ],
  "job": {"hosts": "n0:4,n1:4", "hostfile": "", "rankfile": "ranks", "topology": "package:2 core:4",
          "oversubscribe": true, "nolocal": true, "hwthread_cpus": true,
          "display": ["map", "map:svg=m.svg", "R"]},
  "resources": {"nodes": 2, "ntasks": 6, "cores_per_task": 2, "gpus_per_task": 1,
                "exclusive": true,
                "R": {"version": 1, "execution": {"R_lite": [{"rank": "0-1",
                      "children": {"core": "0-3", "gpu": "0"}}], "nodelist": ["n[0-1]"]}}},
  "attributes": {"name": "sim", "cwd": "/home/u", "environment": {"PATH": "/bin", "HOME": "/home/u"},
                 "time_limit": 600, "kill_timeout": 2.5, "kill_on_bad_exit": true, "urgency": 31,
                 "begin_time": 1700000000.25,
                 "dependencies": [{"type": "afterok", "id": 12}, {"type": "afternotok", "id": 18446744073709551615}],
                 "label_io": true, "output": "out.{{taskid}}", "error": "err", "input": "all",
                 "unbuffered": true, "timestamp_output": true, "output_dir": "out",
                 "merge_stderr": true, "rlimits": ["core=0", "nofile=4096,stack=unlimited"],
                 "umask": "022", "mpi": "pmix"}
})";

TEST(Jobspec, FullDocumentRoundTrip) {
    const Jobspec spec = parse_ok(kFullDocument);
    ASSERT_EQ(spec.apps.size(), 2u);
    EXPECT_EQ(spec.apps[0].bind_to, "core:overload-allowed");
    EXPECT_EQ(spec.apps[0].env, (std::vector<EnvRule>{{EnvRule::Kind::kSet, "A=1"},
                                                      {EnvRule::Kind::kRemove, "X*"},
                                                      {EnvRule::Kind::kFile, "a.env"}}));
    EXPECT_EQ(spec.apps[1].ntasks, 4294967295u);
    EXPECT_EQ(spec.apps[1].hosts, "+n1,+e:2");
    EXPECT_EQ(spec.apps[1].hostfile, "b.hosts");
    EXPECT_EQ(spec.job.hosts, "n0:4,n1:4");
    EXPECT_EQ(spec.job.display, (std::vector<std::string>{"map", "map:svg=m.svg", "R"}));
    EXPECT_TRUE(spec.job.oversubscribe && spec.job.nolocal && spec.job.hwthread_cpus);
    EXPECT_EQ(spec.resources.cores_per_task, 2u);
    ASSERT_TRUE(spec.resources.R.has_value());
    EXPECT_EQ(spec.resources.R->short_form(), "rank[0-1]/core[0-3],gpu0");
    EXPECT_EQ(spec.attributes.environment.at("HOME"), "/home/u");
    EXPECT_EQ(spec.attributes.time_limit, 600.0);
    EXPECT_EQ(spec.attributes.kill_timeout, 2.5);
    EXPECT_EQ(spec.attributes.begin_time, 1700000000.25);
    EXPECT_EQ(spec.attributes.urgency, Jobspec::kUrgencyExpedite);
    EXPECT_EQ(spec.attributes.dependencies,
              (std::vector<Dependency>{{Dependency::Type::kAfterOk, 12},
                                       {Dependency::Type::kAfterNotOk, 18446744073709551615u}}));
    EXPECT_EQ(spec.attributes.rlimits,
              (std::vector<std::string>{"core=0", "nofile=4096,stack=unlimited"}));
    EXPECT_EQ(spec.attributes.umask, "022");
    EXPECT_EQ(spec.attributes.mpi, "pmix");
    EXPECT_TRUE(spec.attributes.timestamp_output);
    EXPECT_EQ(spec.attributes.output_dir, "out");
    EXPECT_TRUE(spec.attributes.merge_stderr);
    expect_round_trip(spec);
    EXPECT_EQ(
        spec.encode(),
        R"({"version":1,"apps":[{"command":["./a","x"],"ntasks":2,"map_by":"core:PE=2",)"
        R"("rank_by":"span","bind_to":"core:overload-allowed","hosts":"","hostfile":"",)"
        R"("env":[{"set":"A=1"},{"remove":"X*"},{"file":"a.env"}],"cwd":"/tmp"},)"
        R"({"command":["./b"],"ntasks":4294967295,"map_by":"package","rank_by":"fill",)"
        R"("bind_to":"none","hosts":"+n1,+e:2","hostfile":"b.hosts","env":[{"set":"B"}],)"
        R"("cwd":"/b"}],"job":{"hosts":"n0:4,n1:4","hostfile":"","rankfile":"ranks",)"
        R"("topology":"package:2 core:4","oversubscribe":true,"nolocal":true,)"
        R"("hwthread_cpus":true,"display":["map","map:svg=m.svg","R"]},)"
        R"("resources":{"nodes":2,"ntasks":6,"cores_per_task":2,"gpus_per_task":1,)"
        R"("exclusive":true,"constraint":{},"R":{"version":1,"execution":{"R_lite":[{"rank":"0-1",)"
        R"("children":{"core":"0-3","gpu":"0"}}],"nodelist":["n[0-1]"],"starttime":0.0,)"
        R"("expiration":0.0}}},"attributes":{"name":"sim","cwd":"/home/u",)"
        R"("environment":{"HOME":"/home/u","PATH":"/bin"},"time_limit":600,)"
        R"("kill_timeout":2.5,"kill_on_bad_exit":true,"urgency":31,)"
        R"("begin_time":1700000000.25,"dependencies":[{"type":"afterok","id":12},)"
        R"({"type":"afternotok","id":18446744073709551615}],"label_io":true,)"
        R"("output":"out.{{taskid}}","error":"err","input":"all","unbuffered":true,)"
        R"("timestamp_output":true,"output_dir":"out","merge_stderr":true,)"
        R"("rlimits":["core=0","nofile=4096,stack=unlimited"],"umask":"022",)"
        R"("mpi":"pmix"}})");
}

// `gantry run --env A=1 --cwd /job -n 2 ./a : -n 1 -H n1 --env-file b.env --cwd /b ./b
//  : -n 3 --env-remove 'OMP_*' ./c x y`
TEST(Jobspec, MpmdAppsKeepTheirOwnEnvAndCwd) {
    const Jobspec spec = parse_ok(R"({"version":1,"apps":[
        {"command":["./a"],"ntasks":2,"env":[{"set":"A=1"}],"cwd":"/job"},
        {"command":["./b"],"ntasks":1,"hosts":"n1","env":[{"file":"b.env"}],"cwd":"/b"},
        {"command":["./c","x","y"],"ntasks":3,"env":[{"remove":"OMP_*"}]}]})");
    ASSERT_EQ(spec.apps.size(), 3u);
    EXPECT_EQ(spec.apps[0].env, (std::vector<EnvRule>{{EnvRule::Kind::kSet, "A=1"}}));
    EXPECT_EQ(spec.apps[0].cwd, "/job");
    EXPECT_EQ(spec.apps[1].env, (std::vector<EnvRule>{{EnvRule::Kind::kFile, "b.env"}}));
    EXPECT_EQ(spec.apps[1].cwd, "/b");
    EXPECT_EQ(spec.apps[1].hosts, "n1");
    EXPECT_EQ(spec.apps[2].env, (std::vector<EnvRule>{{EnvRule::Kind::kRemove, "OMP_*"}}));
    EXPECT_EQ(spec.apps[2].cwd, "");
    EXPECT_EQ(spec.apps[2].command, (std::vector<std::string>{"./c", "x", "y"}));
    expect_round_trip(spec);

    // Apps are compared in order: another order is another program.
    Jobspec swapped = spec;
    std::swap(swapped.apps[1], swapped.apps[2]);
    EXPECT_NE(swapped, spec);
}

TEST(Jobspec, EmbeddedRIsReadAsRAndWrittenInRfcOrder) {
    const Jobspec spec = parse_ok(R"({"version":1,"apps":[{"command":["true"]}],
        "resources":{"R":{"execution":{"expiration":20,"starttime":10.5,
            "nodelist":["a","b"],"properties":{"big":"1"},"nslots":4,
            "R_lite":[{"children":{"gpu":"0-1","core":"0-7"},"rank":"0-1"}]},
            "version":1,"attributes":{"system":{"queue":"batch"}}}}})");
    ASSERT_TRUE(spec.resources.R.has_value());
    const ResourceSet& R = *spec.resources.R;
    EXPECT_EQ(R.nnodes(), 2u);
    EXPECT_EQ(R.nodelist().encode(), "a,b");
    EXPECT_EQ(R.ranks_with_property("big").encode(), "1");
    EXPECT_EQ(R.nslots(), 4);
    const std::string encoded = spec.encode();
    const std::string expected_R =
        R"("R":{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-7",)"
        R"("gpu":"0-1"}}],"nodelist":["a,b"],"properties":{"big":"1"},"starttime":10.5,)"
        R"("expiration":20.0,"nslots":4},"attributes":{"system":{"queue":"batch"}}}})";
    EXPECT_NE(encoded.find(expected_R), std::string::npos) << encoded;
    EXPECT_EQ(R.encode(), ResourceSet::parse(R.encode()).value().encode());
    expect_round_trip(spec);

    // null is no R; an R of the earlier RFC 20 text is kept with its scheduling.
    EXPECT_FALSE(parse_ok(R"({"version":1,"apps":[{"command":["true"]}],"resources":{"R":null}})")
                     .resources.R.has_value());
    const Jobspec earlier = parse_ok(R"({"version":1,"apps":[{"command":["true"]}],
        "resources":{"R":{"version":1,"scheduling":{"graph":{"nodes":[],"edges":[]}}}}})");
    ASSERT_TRUE(earlier.resources.R.has_value());
    EXPECT_TRUE(earlier.resources.R->scheduling().has_value());
    expect_round_trip(earlier);
}

TEST(Jobspec, SecondsAreWholeWhenWholeAndExactOtherwise) {
    Jobspec spec;
    spec.apps.push_back(app_of({"true"}));
    spec.attributes.time_limit = 0.001;
    spec.attributes.kill_timeout = 0;
    spec.attributes.begin_time = 1e300;
    const std::string encoded = spec.encode();
    EXPECT_NE(encoded.find(R"("time_limit":0.001,"kill_timeout":0,)"), std::string::npos)
        << encoded;
    EXPECT_NE(encoded.find(R"("begin_time":1e+300,)"), std::string::npos) << encoded;
    expect_round_trip(spec);

    // -0 is read as 0, so that it is written as 0.
    const Jobspec negative_zero =
        parse_ok(R"({"version":1,"apps":[{"command":["true"]}],"attributes":{"time_limit":-0.0}})");
    EXPECT_FALSE(std::signbit(negative_zero.attributes.time_limit));
    EXPECT_EQ(negative_zero, parse_ok(R"({"version":1,"apps":[{"command":["true"]}]})"));
}

// mpi, like the other option strings, is carried as given: the layer that
// acts on it checks it, as gantry run's --mpi is checked on the command line.
TEST(Jobspec, MpiIsCarriedAsGiven) {
    for (const std::string mpi : {"", "pmix", "pmi1", "none", "pmi2"}) {
        const Jobspec spec = parse_ok(R"({"version":1,"apps":[{"command":["true"]}],)"
                                      R"("attributes":{"mpi":")" +
                                      mpi + R"("}})");
        EXPECT_EQ(spec.attributes.mpi, mpi);
        EXPECT_NE(spec.encode().find(R"("umask":"","mpi":")" + mpi + R"("}})"), std::string::npos)
            << spec.encode();
        expect_round_trip(spec);
    }
}

TEST(Jobspec, DependencyTypeNames) {
    EXPECT_EQ(dependency_type_name(Dependency::Type::kAfterOk), "afterok");
    EXPECT_EQ(dependency_type_name(Dependency::Type::kAfterAny), "afterany");
    EXPECT_EQ(dependency_type_name(Dependency::Type::kAfterNotOk), "afternotok");
}

struct BadCase {
    std::string_view input;
    std::string_view message;
};

// `{"version":1,"apps":[APP]...}` with a good app unless the case says otherwise.
#define JOBSPEC(rest) R"({"version":1,"apps":[{"command":["true"]}],)" rest "}"

const BadCase kBadCases[] = {
    // The document.
    {"", R"(jobspec: invalid JSON at offset 0 in "")"},
    {R"({"version":1,"apps":[{"command":["true"]}]}x)",
     R"(jobspec: invalid JSON at offset 43 in "{\"version\":1,\"apps\":[{\"command\":[\"true\"]}]}x")"},
    {R"({"version":1e999})",
     R"(jobspec: invalid JSON: a number is out of range in "{\"version\":1e999}")"},
    {"[]", "jobspec: expected a jobspec (a JSON object), got array"},
    {"{}", R"(jobspec: missing key "version")"},
    {R"({"version":"1","apps":[]})", "jobspec: version: expected an integer, got string"},
    {R"({"version":1.0,"apps":[]})", "jobspec: version: expected an integer, got 1.0"},
    {R"({"version":2,"apps":[],"other":1})",
     "jobspec: version: unsupported version 2 (expected 1)"},
    {R"({"version":1})", R"(jobspec: missing key "apps")"},
    {JOBSPEC(R"("queue":"batch")"),
     R"(jobspec: unknown key "queue" (expected version, apps, job, resources, attributes))"},
    // Apps.
    {R"({"version":1,"apps":{}})", "jobspec: apps: expected an array, got object"},
    {R"({"version":1,"apps":[]})", "jobspec: apps: expected at least one app"},
    {R"({"version":1,"apps":["true"]})", "jobspec: apps[0]: expected an object, got string"},
    {R"({"version":1,"apps":[{"ntasks":1}]})", R"(jobspec: apps[0]: missing key "command")"},
    {R"({"version":1,"apps":[{"command":"true"}]})",
     "jobspec: apps[0].command: expected an array of strings, got string"},
    {R"({"version":1,"apps":[{"command":[]}]})", "jobspec: apps[0].command: empty command"},
    {R"({"version":1,"apps":[{"command":["a",1]}]})",
     "jobspec: apps[0].command[1]: expected a string, got 1"},
    {R"({"version":1,"apps":[{"command":["","x"]}]})",
     "jobspec: apps[0].command[0]: empty program name"},
    {R"({"version":1,"apps":[{"command":["a\u0000b"]}]})",
     "jobspec: apps[0].command[0]: contains a NUL byte"},
    {R"({"version":1,"apps":[{"command":["a"],"nprocs":2}]})",
     R"(jobspec: apps[0]: unknown key "nprocs" (expected command, ntasks, map_by, rank_by, )"
     R"(bind_to, hosts, hostfile, env, cwd))"},
    {R"({"version":1,"apps":[{"command":["a"]},{"command":["b"],"ntasks":-3}]})",
     "jobspec: apps[1].ntasks: expected a non-negative integer, got -3"},
    {R"({"version":1,"apps":[{"command":["a"],"ntasks":1.5}]})",
     "jobspec: apps[0].ntasks: expected a non-negative integer, got 1.5"},
    {R"({"version":1,"apps":[{"command":["a"],"ntasks":"2"}]})",
     "jobspec: apps[0].ntasks: expected a non-negative integer, got string"},
    {R"({"version":1,"apps":[{"command":["a"],"ntasks":4294967296}]})",
     "jobspec: apps[0].ntasks: too large: 4294967296 (at most 4294967295)"},
    {R"({"version":1,"apps":[{"command":["a"],"map_by":3}]})",
     "jobspec: apps[0].map_by: expected a string, got 3"},
    {R"({"version":1,"apps":[{"command":["a"],"rank_by":null}]})",
     "jobspec: apps[0].rank_by: expected a string, got null"},
    {R"({"version":1,"apps":[{"command":["a"],"bind_to":["core"]}]})",
     "jobspec: apps[0].bind_to: expected a string, got array"},
    {R"({"version":1,"apps":[{"command":["a"],"hosts":"n0"}]})",
     "jobspec: apps[0].hosts: app 0's hosts pick among job.hostfile's or resources.R's: without "
     "either, give job.hosts"},
    {R"({"version":1,"apps":[{"command":["a"],"hostfile":"h"}]})",
     "jobspec: apps[0].hostfile: app 0's hostfile is the job's: give job.hostfile"},
    {R"({"version":1,"apps":[{"command":["a"]},{"command":["b"],"hosts":1}]})",
     "jobspec: apps[1].hosts: expected a string, got 1"},
    {R"({"version":1,"apps":[{"command":["a"],"env":{"set":"A=1"}}]})",
     "jobspec: apps[0].env: expected an array, got object"},
    {R"({"version":1,"apps":[{"command":["a"],"env":["A=1"]}]})",
     "jobspec: apps[0].env[0]: expected an object, got string"},
    {R"({"version":1,"apps":[{"command":["a"],"env":[{"set":"A=1"},{}]}]})",
     "jobspec: apps[0].env[1]: expected exactly one of set, remove, file, got none"},
    {R"({"version":1,"apps":[{"command":["a"],"env":[{"set":"A=1","file":"f"}]}]})",
     "jobspec: apps[0].env[0]: expected exactly one of set, remove, file, got file and set"},
    {R"({"version":1,"apps":[{"command":["a"],"env":[{"set":"A","remove":"B","file":"f"}]}]})",
     "jobspec: apps[0].env[0]: expected exactly one of set, remove, file, got file, remove and "
     "set"},
    {R"({"version":1,"apps":[{"command":["a"],"env":[{"add":"A=1"}]}]})",
     R"(jobspec: apps[0].env[0]: unknown key "add" (expected set, remove, file))"},
    {R"({"version":1,"apps":[{"command":["a"],"env":[{"set":1}]}]})",
     "jobspec: apps[0].env[0].set: expected a string, got 1"},
    {R"({"version":1,"apps":[{"command":["a"],"env":[{"remove":false}]}]})",
     "jobspec: apps[0].env[0].remove: expected a string, got boolean"},
    {R"({"version":1,"apps":[{"command":["a"],"cwd":7}]})",
     "jobspec: apps[0].cwd: expected a string, got 7"},
    // Job.
    {JOBSPEC(R"("job":[])"), "jobspec: job: expected an object, got array"},
    {JOBSPEC(R"("job":{"dry_run":true})"),
     R"(jobspec: job: unknown key "dry_run" (expected hosts, hostfile, rankfile, topology, )"
     R"(oversubscribe, nolocal, hwthread_cpus, display))"},
    {JOBSPEC(R"("job":{"hosts":["n0"]})"), "jobspec: job.hosts: expected a string, got array"},
    {JOBSPEC(R"("job":{"hostfile":0})"), "jobspec: job.hostfile: expected a string, got 0"},
    {JOBSPEC(R"("job":{"rankfile":{}})"), "jobspec: job.rankfile: expected a string, got object"},
    {JOBSPEC(R"("job":{"topology":true})"),
     "jobspec: job.topology: expected a string, got boolean"},
    {JOBSPEC(R"("job":{"oversubscribe":1})"),
     "jobspec: job.oversubscribe: expected a boolean, got 1"},
    {JOBSPEC(R"("job":{"nolocal":"yes"})"), "jobspec: job.nolocal: expected a boolean, got string"},
    {JOBSPEC(R"("job":{"hwthread_cpus":null})"),
     "jobspec: job.hwthread_cpus: expected a boolean, got null"},
    {JOBSPEC(R"("job":{"display":"map"})"),
     "jobspec: job.display: expected an array of strings, got string"},
    {JOBSPEC(R"("job":{"display":["map",1]})"),
     "jobspec: job.display[1]: expected a string, got 1"},
    // Resources.
    {JOBSPEC(R"("resources":7)"), "jobspec: resources: expected an object, got 7"},
    {JOBSPEC(R"("resources":{"cores":2})"),
     R"(jobspec: resources: unknown key "cores" (expected nodes, ntasks, cores_per_task, )"
     R"(gpus_per_task, exclusive, constraint, R))"},
    {JOBSPEC(R"("resources":{"nodes":-1})"),
     "jobspec: resources.nodes: expected a non-negative integer, got -1"},
    {JOBSPEC(R"("resources":{"ntasks":2.0})"),
     "jobspec: resources.ntasks: expected a non-negative integer, got 2.0"},
    {JOBSPEC(R"("resources":{"cores_per_task":0})"),
     "jobspec: resources.cores_per_task: must be at least 1, got 0"},
    {JOBSPEC(R"("resources":{"cores_per_task":-2})"),
     "jobspec: resources.cores_per_task: expected a non-negative integer, got -2"},
    {JOBSPEC(R"("resources":{"gpus_per_task":1e10})"),
     "jobspec: resources.gpus_per_task: expected a non-negative integer, got 10000000000.0"},
    {JOBSPEC(R"("resources":{"gpus_per_task":18446744073709551615})"),
     "jobspec: resources.gpus_per_task: too large: 18446744073709551615 (at most 4294967295)"},
    {JOBSPEC(R"("resources":{"exclusive":"yes"})"),
     "jobspec: resources.exclusive: expected a boolean, got string"},
    {JOBSPEC(R"("resources":{"R":[]})"),
     "jobspec: resources.R: expected an R document (a JSON object) or null, got array"},
    {JOBSPEC(R"("resources":{"R":"R.json"})"),
     "jobspec: resources.R: expected an R document (a JSON object) or null, got string"},
    {JOBSPEC(R"("resources":{"R":{"version":1}})"),
     R"(jobspec: resources.R: missing key "execution")"},
    {JOBSPEC(R"("resources":{"R":{"version":2,"execution":{"R_lite":[]}}})"),
     "jobspec: resources.R: version: unsupported version 2 (expected 1)"},
    {JOBSPEC(R"("resources":{"R":{"version":1,"execution":{"R_lite":[{"rank":"x",)"
             R"("children":{"core":"0"}}]}}})"),
     R"(jobspec: resources.R: execution.R_lite[0].rank: expected an id, found 'x' at offset 0 )"
     R"(in "x")"},
    {JOBSPEC(R"("resources":{"R":{"version":1,"execution":{"R_lite":[{"rank":"0-1",)"
             R"("children":{"core":"0"}}],"nodelist":["a"]}}})"),
     "jobspec: resources.R: execution.nodelist: 1 host for 2 ranks"},
    // Attributes.
    {JOBSPEC(R"("attributes":"x")"), "jobspec: attributes: expected an object, got string"},
    {JOBSPEC(R"("attributes":{"queue":"batch"})"),
     R"(jobspec: attributes: unknown key "queue" (expected name, cwd, environment, time_limit, )"
     R"(kill_timeout, kill_on_bad_exit, urgency, begin_time, dependencies, label_io, output, )"
     R"(error, input, unbuffered, timestamp_output, output_dir, merge_stderr, rlimits, umask, )"
     R"(mpi))"},
    {JOBSPEC(R"("attributes":{"name":1})"), "jobspec: attributes.name: expected a string, got 1"},
    {JOBSPEC(R"("attributes":{"cwd":null})"),
     "jobspec: attributes.cwd: expected a string, got null"},
    {JOBSPEC(R"("attributes":{"environment":["PATH=/bin"]})"),
     "jobspec: attributes.environment: expected an object of strings, got array"},
    {JOBSPEC(R"("attributes":{"environment":{"HOME":"/h","PATH":1}})"),
     "jobspec: attributes.environment.PATH: expected a string, got 1"},
    {JOBSPEC(R"("attributes":{"environment":{"A B":null}})"),
     R"(jobspec: attributes.environment["A B"]: expected a string, got null)"},
    {JOBSPEC(R"("attributes":{"environment":{"X":"a\u0000b"}})"),
     "jobspec: attributes.environment.X: contains a NUL byte"},
    {JOBSPEC(R"("attributes":{"environment":{"":"x"}})"),
     R"(jobspec: attributes.environment: invalid variable name "")"},
    {JOBSPEC(R"("attributes":{"environment":{"A=B":"x"}})"),
     R"(jobspec: attributes.environment: invalid variable name "A=B")"},
    {JOBSPEC(R"("attributes":{"time_limit":-1})"),
     "jobspec: attributes.time_limit: expected a non-negative number of seconds, got -1"},
    {JOBSPEC(R"("attributes":{"time_limit":"5m"})"),
     "jobspec: attributes.time_limit: expected a non-negative number of seconds, got string"},
    {JOBSPEC(R"("attributes":{"kill_timeout":-0.5})"),
     "jobspec: attributes.kill_timeout: expected a non-negative number of seconds, got -0.5"},
    {JOBSPEC(R"("attributes":{"kill_on_bad_exit":0})"),
     "jobspec: attributes.kill_on_bad_exit: expected a boolean, got 0"},
    {JOBSPEC(R"("attributes":{"urgency":32})"),
     "jobspec: attributes.urgency: expected an integer from 0 to 31, got 32"},
    {JOBSPEC(R"("attributes":{"urgency":-1})"),
     "jobspec: attributes.urgency: expected an integer from 0 to 31, got -1"},
    {JOBSPEC(R"("attributes":{"urgency":16.5})"),
     "jobspec: attributes.urgency: expected an integer from 0 to 31, got 16.5"},
    {JOBSPEC(R"("attributes":{"urgency":"high"})"),
     "jobspec: attributes.urgency: expected an integer from 0 to 31, got string"},
    {JOBSPEC(R"("attributes":{"begin_time":-1})"),
     "jobspec: attributes.begin_time: expected a non-negative time in seconds since the epoch, "
     "got -1"},
    {JOBSPEC(R"("attributes":{"dependencies":{"afterok":12}})"),
     "jobspec: attributes.dependencies: expected an array, got object"},
    {JOBSPEC(R"("attributes":{"dependencies":["afterok:12"]})"),
     "jobspec: attributes.dependencies[0]: expected an object, got string"},
    {JOBSPEC(R"("attributes":{"dependencies":[{"id":12}]})"),
     R"(jobspec: attributes.dependencies[0]: missing key "type")"},
    {JOBSPEC(R"("attributes":{"dependencies":[{"type":"afterok","id":1},{"type":"afterok"}]})"),
     R"(jobspec: attributes.dependencies[1]: missing key "id")"},
    {JOBSPEC(R"("attributes":{"dependencies":[{"type":"after","id":12}]})"),
     R"(jobspec: attributes.dependencies[0].type: unknown dependency type "after" )"
     R"((expected afterok, afterany, afternotok))"},
    {JOBSPEC(R"("attributes":{"dependencies":[{"type":1,"id":12}]})"),
     "jobspec: attributes.dependencies[0].type: expected a string, got 1"},
    {JOBSPEC(R"("attributes":{"dependencies":[{"type":"afterok","id":0}]})"),
     "jobspec: attributes.dependencies[0].id: expected a positive integer, got 0"},
    {JOBSPEC(R"("attributes":{"dependencies":[{"type":"afterok","id":-4}]})"),
     "jobspec: attributes.dependencies[0].id: expected a positive integer, got -4"},
    {JOBSPEC(R"("attributes":{"dependencies":[{"type":"afterok","id":1.5}]})"),
     "jobspec: attributes.dependencies[0].id: expected a positive integer, got 1.5"},
    {JOBSPEC(R"("attributes":{"dependencies":[{"type":"afterok","id":"12"}]})"),
     "jobspec: attributes.dependencies[0].id: expected a positive integer, got string"},
    {JOBSPEC(R"("attributes":{"dependencies":[{"type":"afterok","id":12,"job":3}]})"),
     R"(jobspec: attributes.dependencies[0]: unknown key "job" (expected type, id))"},
    {JOBSPEC(R"("attributes":{"label_io":"true"})"),
     "jobspec: attributes.label_io: expected a boolean, got string"},
    {JOBSPEC(R"("attributes":{"output":false})"),
     "jobspec: attributes.output: expected a string, got boolean"},
    {JOBSPEC(R"("attributes":{"error":2})"), "jobspec: attributes.error: expected a string, got 2"},
    {JOBSPEC(R"("attributes":{"input":0})"), "jobspec: attributes.input: expected a string, got 0"},
    {JOBSPEC(R"("attributes":{"unbuffered":[]})"),
     "jobspec: attributes.unbuffered: expected a boolean, got array"},
    {JOBSPEC(R"("attributes":{"timestamp_output":1})"),
     "jobspec: attributes.timestamp_output: expected a boolean, got 1"},
    {JOBSPEC(R"("attributes":{"output_dir":["out"]})"),
     "jobspec: attributes.output_dir: expected a string, got array"},
    {JOBSPEC(R"("attributes":{"output_dir":null})"),
     "jobspec: attributes.output_dir: expected a string, got null"},
    {JOBSPEC(R"("attributes":{"merge_stderr":"yes"})"),
     "jobspec: attributes.merge_stderr: expected a boolean, got string"},
    {JOBSPEC(R"("attributes":{"rlimits":"core=0"})"),
     "jobspec: attributes.rlimits: expected an array of strings, got string"},
    {JOBSPEC(R"("attributes":{"rlimits":[0]})"),
     "jobspec: attributes.rlimits[0]: expected a string, got 0"},
    {JOBSPEC(R"("attributes":{"umask":18})"),
     "jobspec: attributes.umask: expected a string, got 18"},
    {JOBSPEC(R"("attributes":{"mpi":null})"),
     "jobspec: attributes.mpi: expected a string, got null"},
    // Several violations: the first in the documented key order is the one told.
    {R"({"version":1,"apps":[{"command":["a"],"ntasks":-1,"cwd":1}],"job":{"nolocal":1}})",
     "jobspec: apps[0].ntasks: expected a non-negative integer, got -1"},
    {JOBSPEC(R"("attributes":{"urgency":99},"resources":{"nodes":-1})"),
     "jobspec: resources.nodes: expected a non-negative integer, got -1"},
};

#undef JOBSPEC

TEST(Jobspec, RejectsEachViolationWithOneMessage) {
    for (const auto& c : kBadCases) {
        const auto spec = Jobspec::parse(c.input);
        ASSERT_FALSE(spec.ok()) << c.input;
        EXPECT_EQ(spec.error().str(), c.message) << c.input;
    }
}

// Values a parser never sees, handed to from_json by a caller.
TEST(Jobspec, FromJsonRejectsNumbersJsonCannotSpell) {
    Json document = Json::parse(R"({"version":1,"apps":[{"command":["true"]}]})");
    document["attributes"]["time_limit"] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(Jobspec::from_json(document).error().str(),
              "jobspec: attributes.time_limit: expected a non-negative number of seconds, got NaN");
    document["attributes"]["time_limit"] = std::numeric_limits<double>::infinity();
    EXPECT_EQ(Jobspec::from_json(document).error().str(),
              "jobspec: attributes.time_limit: expected a non-negative number of seconds, "
              "got infinity");
    document["attributes"]["time_limit"] = 3;  // a signed integer, as code builds it
    document["apps"][0]["ntasks"] = static_cast<std::int64_t>(4);
    const auto spec = Jobspec::from_json(document);
    ASSERT_TRUE(spec.ok()) << spec.error().str();
    EXPECT_EQ(spec->attributes.time_limit, 3.0);
    EXPECT_EQ(spec->apps[0].ntasks, 4u);
    document["apps"][0]["ntasks"] = static_cast<std::int64_t>(-4);
    EXPECT_EQ(Jobspec::from_json(document).error().str(),
              "jobspec: apps[0].ntasks: expected a non-negative integer, got -4");
}

TEST(InstanceRefusal, NamesTheFirstThingAnInstanceCannotTake) {
    using Reason = InstanceRefusal::Reason;
    Jobspec spec;
    Jobspec::App a;
    a.command = {"a"};
    spec.apps.push_back(a);
    EXPECT_EQ(instance_refusal(spec), std::nullopt);
    spec.job.topology = "core:4";
    EXPECT_EQ(instance_refusal(spec), (InstanceRefusal{Reason::kSimulatedTopology, 0}));
    spec.job.topology.clear();
    spec.job.hostfile = "hosts";  // which of the instance's nodes
    EXPECT_EQ(instance_refusal(spec), std::nullopt);
    spec.job = {};
    Jobspec::App b;
    b.command = {"b"};
    b.ntasks = 2;
    spec.apps.push_back(b);
    EXPECT_EQ(instance_refusal(spec), (InstanceRefusal{Reason::kAppWithoutNtasks, 0}));
    spec.apps[0].ntasks = 1;
    EXPECT_EQ(instance_refusal(spec), std::nullopt);
    spec.apps[1].ntasks = 0;
    EXPECT_EQ(instance_refusal(spec), (InstanceRefusal{Reason::kAppWithoutNtasks, 1}));
}

}  // namespace
}  // namespace gantry
