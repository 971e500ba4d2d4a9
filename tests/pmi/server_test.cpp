// The PMI-1 server: the reply to every request, the sequences MPICH 4.0.2
// was seen to send, barriers, line framing, protocol errors, limits, abort,
// spawn, and PMI_process_mapping; one server per node, its barriers
// completed by an owner that merges the nodes' puts.
#include "pmi/server.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace gantry::pmi {
namespace {

constexpr std::string_view kKvs = "kvs_2315_0";

JobInfo job_of(std::uint32_t size, std::string_view mapping = "(vector,(0,1,2))") {
    JobInfo job;
    job.kvsname = kKvs;
    job.size = size;
    job.universe_size = size;
    job.appnum_of_rank.assign(size, 0);
    if (!mapping.empty())
        job.server_keys["PMI_process_mapping"] = mapping;
    job.server_keys["gantry.taskmap"] = "[[0,1,2,1]]";
    return job;
}

// What one call returned, one line per item: each reply as "r<rank> <line>"
// (its newline checked and dropped), then "local barrier, puts: k=v k=v"
// ("(none)" without puts), then "abort <code> by r<rank>", then
// "error: <message>".
std::string outcome(const Effects& effects) {
    std::string text;
    const auto add = [&](const std::string& item) {
        if (!text.empty())
            text += '\n';
        text += item;
    };
    for (const auto& reply : effects.replies) {
        EXPECT_TRUE(reply.line.ends_with('\n')) << reply.line;
        add("r" + std::to_string(reply.rank) + " " +
            reply.line.substr(0, reply.line.size() - (reply.line.ends_with('\n') ? 1 : 0)));
    }
    if (effects.local_barrier) {
        std::string puts;
        for (const auto& [key, value] : effects.local_barrier->puts)
            puts += " " + key + "=" + value;
        add("local barrier, puts:" + (puts.empty() ? std::string(" (none)") : puts));
    }
    if (effects.abort_exit_code)
        add("abort " + std::to_string(*effects.abort_exit_code) + " by r" +
            (effects.abort_rank ? std::to_string(*effects.abort_rank) : "?"));
    if (effects.protocol_error)
        add("error: " + *effects.protocol_error);
    return text;
}

// `server.receive`, its barriers completed at once with the node's own
// puts, as the owner of a job on one node does: the replies of the
// completion follow those of the call.
Effects served(Server& server, std::uint32_t rank, std::string_view bytes) {
    Effects effects = server.receive(rank, bytes);
    if (effects.local_barrier) {
        auto done = server.barrier_complete(effects.local_barrier->puts);
        EXPECT_TRUE(done) << done.error().str();
        if (done)
            for (auto& reply : done->replies)
                effects.replies.push_back(std::move(reply));
        effects.local_barrier.reset();
    }
    return effects;
}

std::string send(Server& server, std::uint32_t rank, std::string_view line) {
    return outcome(served(server, rank, std::string(line) + "\n"));
}

// The same without an owner: a reached barrier shows as "local barrier".
std::string send_alone(Server& server, std::uint32_t rank, std::string_view line) {
    return outcome(server.receive(rank, std::string(line) + "\n"));
}

// One request on a fresh two-task job, from rank 0.
struct Case {
    std::string_view request;
    std::string_view outcome;
};

constexpr Case kReplies[] = {
    {"cmd=init pmi_version=1 pmi_subversion=1",
     "r0 cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0"},
    {"cmd=init pmi_version=1 pmi_subversion=0",
     "r0 cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0"},
    {"cmd=init pmi_version=1 pmi_subversion=2",
     "r0 cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1"},
    {"cmd=init pmi_version=2 pmi_subversion=0",
     "r0 cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1"},
    {"cmd=init pmi_version=one pmi_subversion=1",
     "r0 cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1"},
    {"cmd=init pmi_version=1 pmi_subversion=-1",
     "r0 cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1"},
    {"cmd=get_maxes", "r0 cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866"},
    {"cmd=get_appnum", "r0 cmd=appnum appnum=0"},
    {"cmd=get_universe_size", "r0 cmd=universe_size size=2"},
    {"cmd=get_my_kvsname", "r0 cmd=my_kvsname kvsname=kvs_2315_0"},
    {"cmd=put kvsname=kvs_2315_0 key=-bcast-1-0 value=2F6465762F",
     "r0 cmd=put_result rc=0 msg=success"},
    {"cmd=put kvsname=kvs_other key=k value=v", "r0 cmd=put_result rc=-1 msg=wrong_kvsname"},
    {"cmd=put kvsname=kvs_2315_0 key=PMI_process_mapping value=(vector,(0,2,1))",
     "r0 cmd=put_result rc=-1 msg=key_is_reserved_by_the_server"},
    {"cmd=put kvsname=kvs_2315_0 key=gantry.taskmap value=[]",
     "r0 cmd=put_result rc=-1 msg=key_is_reserved_by_the_server"},
    {"cmd=get kvsname=kvs_2315_0 key=PMI_process_mapping",
     "r0 cmd=get_result rc=0 msg=success value=(vector,(0,1,2))"},
    {"cmd=get kvsname=kvs_2315_0 key=gantry.taskmap",
     "r0 cmd=get_result rc=0 msg=success value=[[0,1,2,1]]"},
    {"cmd=get kvsname=kvs_2315_0 key=hostname[1]",
     "r0 cmd=get_result rc=-1 msg=key_hostname[1]_not_found value=unknown"},
    {"cmd=get kvsname=kvs_2315_0 key=PMI_dead_processes",
     "r0 cmd=get_result rc=-1 msg=key_PMI_dead_processes_not_found value=unknown"},
    {"cmd=get kvsname=kvs_other key=PMI_process_mapping",
     "r0 cmd=get_result rc=-1 msg=wrong_kvsname value=unknown"},
    {"cmd=finalize", "r0 cmd=finalize_ack"},
    {"cmd=publish_name service=s port=p",
     "r0 cmd=publish_result rc=-1 msg=name_publishing_not_supported"},
    {"cmd=unpublish_name service=s",
     "r0 cmd=unpublish_result rc=-1 msg=name_publishing_not_supported"},
    {"cmd=lookup_name service=s", "r0 cmd=lookup_result rc=-1 msg=name_publishing_not_supported"},
    // Tokens as MPICH's client splits them: any order, extra ones ignored,
    // runs of spaces, '=' inside a value, the first of a repeated key.
    {"cmd=get key=PMI_process_mapping kvsname=kvs_2315_0 found=TRUE",
     "r0 cmd=get_result rc=0 msg=success value=(vector,(0,1,2))"},
    {"  cmd=get_appnum   extra=1  ", "r0 cmd=appnum appnum=0"},
    {"cmd=put kvsname=kvs_2315_0 key=k value=segments=3", "r0 cmd=put_result rc=0 msg=success"},
    {"cmd=get_maxes cmd=get_appnum", "r0 cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866"},
    {"cmd=abort exitcode=7", "abort 7 by r0"},
    {"cmd=abort exitcode=7 message=bye", "abort 7 by r0"},
    {"cmd=abort", "abort 1 by r0"},
    {"cmd=abort exitcode=seven", "abort 1 by r0"},
    {"cmd=abort exitcode=", "abort 1 by r0"},
    {"cmd=abort exitcode=-3", "abort -3 by r0"},
};

TEST(PmiServer, RepliesToEachRequest) {
    for (const auto& c : kReplies) {
        Server server(job_of(2));
        EXPECT_EQ(send(server, 0, c.request), c.outcome) << c.request;
    }
}

constexpr Case kProtocolErrors[] = {
    {"cmd=foo", R"(error: pmi: unknown command "foo" at offset 4 in "cmd=foo")"},
    {"cmd=Init pmi_version=1 pmi_subversion=1",
     R"(error: pmi: unknown command "Init" at offset 4 in "cmd=Init pmi_version=1 pmi_subversion=1")"},
    {"cmd=get_maxesx",
     R"(error: pmi: unknown command "get_maxesx" at offset 4 in "cmd=get_maxesx")"},
    {"cmd=", R"(error: pmi: unknown command "" at offset 4 in "cmd=")"},
    {"cmd=initack pmiid=0",
     R"(error: pmi: unknown command "initack" at offset 4 in "cmd=initack pmiid=0")"},
    {"cmd=put kvsname", R"(error: pmi: a token without '=' at offset 8 in "cmd=put kvsname")"},
    {"cmd=get_maxes =1", R"(error: pmi: '=' without a key at offset 14 in "cmd=get_maxes =1")"},
    {"pmi_version=1 cmd=init",
     R"(error: pmi: a request that does not start with cmd= at offset 0 in "pmi_version=1 cmd=init")"},
    {"  CMD=init",
     R"(error: pmi: a request that does not start with cmd= at offset 2 in "  CMD=init")"},
    {"", R"(error: pmi: an empty request in "")"},
    {"   ", R"(error: pmi: an empty request in "   ")"},
    {"cmd=init pmi_version=1",
     R"(error: pmi: init without pmi_subversion= in "cmd=init pmi_version=1")"},
    {"cmd=put kvsname=kvs_2315_0 key=k",
     R"(error: pmi: put without value= in "cmd=put kvsname=kvs_2315_0 key=k")"},
    {"cmd=put key=k value=v", R"(error: pmi: put without kvsname= in "cmd=put key=k value=v")"},
    {"cmd=get kvsname=kvs_2315_0",
     R"(error: pmi: get without key= in "cmd=get kvsname=kvs_2315_0")"},
    {"cmd=get key=k", R"(error: pmi: get without kvsname= in "cmd=get key=k")"},
    {"cmd=barrier_in\ncmd=barrier_in",
     R"(error: pmi: a second barrier_in before barrier_out in "cmd=barrier_in")"},
    {"cmd=get_maxes\r",
     R"(error: pmi: unknown command "get_maxes\x0d" at offset 4 in "cmd=get_maxes\x0d")"},
};

TEST(PmiServer, ProtocolErrors) {
    for (const auto& c : kProtocolErrors) {
        Server server(job_of(2));
        EXPECT_EQ(send(server, 0, c.request), c.outcome) << c.request;
        // Everything that rank sends later is ignored.
        EXPECT_EQ(send(server, 0, "cmd=get_maxes"), "") << c.request;
        // The other rank is still served.
        EXPECT_EQ(send(server, 1, "cmd=get_appnum"), "r1 cmd=appnum appnum=0") << c.request;
    }
}

TEST(PmiServer, RankOutsideTheJob) {
    Server server(job_of(4));
    EXPECT_EQ(send(server, 4, "cmd=get_maxes"), "error: pmi: rank 4 is not in this job of 4 tasks");
    EXPECT_FALSE(server.initialized(4));
    EXPECT_FALSE(server.finalized(4));
    server.disconnected(4);  // ignored
    EXPECT_EQ(send(server, 3, "cmd=get_appnum"), "r3 cmd=appnum appnum=0");
}

TEST(PmiServer, RepliesBeforeAnErrorAreKept) {
    Server server(job_of(2));
    EXPECT_EQ(outcome(server.receive(0, "cmd=get_appnum\ncmd=nope\ncmd=get_maxes\n")),
              "r0 cmd=appnum appnum=0\n"
              R"(error: pmi: unknown command "nope" at offset 4 in "cmd=nope")");
    EXPECT_EQ(outcome(server.receive(0, "cmd=get_maxes\n")), "");
}

// A line of 1024 bytes with its newline is the longest a client may send.
TEST(PmiServer, LineOf1024BytesIsServedAndOf1025IsAnError) {
    const std::string start = "cmd=put kvsname=kvs_2315_0 key=k value=";
    const std::string longest = start + std::string(1023 - start.size(), 'A') + "\n";
    ASSERT_EQ(longest.size(), 1024u);
    Server server(job_of(2));
    EXPECT_EQ(outcome(server.receive(0, longest)), "r0 cmd=put_result rc=-1 msg=value_too_long");

    const std::string too_long = start + std::string(1024 - start.size(), 'A') + "\n";
    ASSERT_EQ(too_long.size(), 1025u);
    EXPECT_EQ(
        outcome(server.receive(1, too_long)),
        "error: pmi: a line longer than 1024 bytes at offset 1023 in "
        R"("cmd=put kvsname=kvs_2315_0 key=k value=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"...)");
}

// The error comes as soon as 1024 bytes without a newline are in: a task
// cannot make the server buffer without bound.
TEST(PmiServer, LongLineIsRefusedBeforeItsNewline) {
    Server server(job_of(1));
    EXPECT_EQ(outcome(server.receive(0, std::string(1000, 'x'))), "");
    EXPECT_EQ(outcome(server.receive(0, std::string(23, 'x'))), "");
    const Effects effects = server.receive(0, "x");
    ASSERT_TRUE(effects.protocol_error);
    EXPECT_EQ(*effects.protocol_error, "pmi: a line longer than 1024 bytes at offset 1023 in \"" +
                                           std::string(80, 'x') + "\"...");
    EXPECT_EQ(outcome(server.receive(0, std::string(5000, 'x') + "\n")), "");
}

TEST(PmiServer, RequestSplitByteByByte) {
    Server server(job_of(2));
    const std::string request = "cmd=get kvsname=kvs_2315_0 key=PMI_process_mapping\n";
    for (std::size_t i = 0; i + 1 < request.size(); ++i)
        EXPECT_EQ(outcome(server.receive(1, request.substr(i, 1))), "") << i;
    EXPECT_EQ(outcome(server.receive(1, "\n")),
              "r1 cmd=get_result rc=0 msg=success value=(vector,(0,1,2))");
    // A rank's partial line is its own.
    EXPECT_EQ(outcome(server.receive(0, "cmd=get_")), "");
    EXPECT_EQ(outcome(server.receive(1, "cmd=get_appnum\n")), "r1 cmd=appnum appnum=0");
    EXPECT_EQ(outcome(server.receive(0, "maxes\ncmd=get_")),
              "r0 cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866");
    EXPECT_EQ(outcome(server.receive(0, "appnum\n")), "r0 cmd=appnum appnum=0");
}

TEST(PmiServer, SeveralRequestsInOneCall) {
    Server server(job_of(1));
    EXPECT_EQ(outcome(served(server, 0,
                             "cmd=init pmi_version=1 pmi_subversion=1\n"
                             "cmd=get_maxes\ncmd=get_appnum\ncmd=get_my_kvsname\n"
                             "cmd=barrier_in\ncmd=finalize\n")),
              "r0 cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
              "r0 cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866\n"
              "r0 cmd=appnum appnum=0\n"
              "r0 cmd=my_kvsname kvsname=kvs_2315_0\n"
              "r0 cmd=barrier_out\n"
              "r0 cmd=finalize_ack");
    // One Reply per line.
    const Effects effects = server.receive(0, "cmd=get_appnum\ncmd=get_appnum\n");
    ASSERT_EQ(effects.replies.size(), 2u);
    EXPECT_EQ(effects.replies[0], (Reply{0, "cmd=appnum appnum=0\n"}));
}

TEST(PmiServer, BarrierAnswersEveryRankWhenTheLastEnters) {
    Server server(job_of(4));
    EXPECT_EQ(send(server, 2, "cmd=barrier_in"), "");
    EXPECT_EQ(send(server, 0, "cmd=barrier_in"), "");
    // Ranks in the barrier are still answered (the barrier does not block the server).
    EXPECT_EQ(send(server, 3, "cmd=get_appnum"), "r3 cmd=appnum appnum=0");
    EXPECT_EQ(send(server, 3, "cmd=barrier_in"), "");
    EXPECT_EQ(send(server, 1, "cmd=barrier_in"),
              "r0 cmd=barrier_out\nr1 cmd=barrier_out\nr2 cmd=barrier_out\nr3 cmd=barrier_out");
    // The next barrier starts empty.
    for (std::uint32_t rank : {3u, 2u, 1u})
        EXPECT_EQ(send(server, rank, "cmd=barrier_in"), "");
    EXPECT_EQ(send(server, 0, "cmd=barrier_in"),
              "r0 cmd=barrier_out\nr1 cmd=barrier_out\nr2 cmd=barrier_out\nr3 cmd=barrier_out");
}

TEST(PmiServer, DoubleBarrierInIsAnErrorAndTheBarrierNeverCompletes) {
    Server server(job_of(2));
    EXPECT_EQ(send(server, 0, "cmd=barrier_in"), "");
    EXPECT_EQ(send(server, 0, "cmd=barrier_in"),
              R"(error: pmi: a second barrier_in before barrier_out in "cmd=barrier_in")");
    EXPECT_EQ(send(server, 1, "cmd=barrier_in"), "");
}

TEST(PmiServer, DisconnectedTask) {
    Server server(job_of(2));
    EXPECT_FALSE(server.initialized(0));
    EXPECT_EQ(send(server, 0, "cmd=init pmi_version=1 pmi_subversion=1"),
              "r0 cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
    EXPECT_EQ(send(server, 0, "cmd=barrier_in"), "");
    EXPECT_EQ(outcome(server.receive(0, "cmd=get_")), "");
    server.disconnected(0);
    EXPECT_TRUE(server.initialized(0));
    EXPECT_FALSE(server.finalized(0));
    // Rank 0 left the barrier: nobody is told barrier_out, nor is rank 0 answered.
    EXPECT_EQ(send(server, 1, "cmd=barrier_in"), "");
    EXPECT_EQ(outcome(server.receive(0, "maxes\ncmd=get_maxes\n")), "");
}

TEST(PmiServer, InitializedAndFinalized) {
    Server server(job_of(2));
    EXPECT_EQ(send(server, 1, "cmd=init pmi_version=2 pmi_subversion=0"),
              "r1 cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1");
    EXPECT_TRUE(server.initialized(1));  // it did speak PMI
    EXPECT_FALSE(server.initialized(0));
    EXPECT_FALSE(server.finalized(1));
    EXPECT_EQ(send(server, 1, "cmd=finalize"), "r1 cmd=finalize_ack");
    EXPECT_TRUE(server.finalized(1));
    EXPECT_FALSE(server.finalized(0));
}

TEST(PmiServer, AppnumAndUniverseSizeComeFromTheJob) {
    JobInfo job = job_of(3);
    job.appnum_of_rank = {0, 0, 1};
    job.universe_size = 16;
    Server server(job);
    EXPECT_EQ(send(server, 1, "cmd=get_appnum"), "r1 cmd=appnum appnum=0");
    EXPECT_EQ(send(server, 2, "cmd=get_appnum"), "r2 cmd=appnum appnum=1");
    EXPECT_EQ(send(server, 0, "cmd=get_universe_size"), "r0 cmd=universe_size size=16");
}

TEST(PmiServer, PutsAreVisibleToEveryGetAtOnce) {
    Server server(job_of(2));
    const std::string get = "cmd=get kvsname=kvs_2315_0 key=-bcast-1-0";
    EXPECT_EQ(send(server, 1, get),
              "r1 cmd=get_result rc=-1 msg=key_-bcast-1-0_not_found value=unknown");
    EXPECT_EQ(send(server, 0, "cmd=put kvsname=kvs_2315_0 key=-bcast-1-0 value=2F64"),
              "r0 cmd=put_result rc=0 msg=success");
    EXPECT_EQ(send(server, 1, get), "r1 cmd=get_result rc=0 msg=success value=2F64");
    EXPECT_EQ(send(server, 0, get), "r0 cmd=get_result rc=0 msg=success value=2F64");
    // A later put replaces the value; an empty value is a value.
    EXPECT_EQ(send(server, 1, "cmd=put kvsname=kvs_2315_0 key=-bcast-1-0 value="),
              "r1 cmd=put_result rc=0 msg=success");
    EXPECT_EQ(send(server, 0, get), "r0 cmd=get_result rc=0 msg=success value=");
    EXPECT_EQ(send(server, 0, "cmd=put kvsname=kvs_2315_0 key=v value=segments=3"),
              "r0 cmd=put_result rc=0 msg=success");
    EXPECT_EQ(send(server, 1, "cmd=get kvsname=kvs_2315_0 key=v"),
              "r1 cmd=get_result rc=0 msg=success value=segments=3");
}

TEST(PmiServer, PutAndGetLimits) {
    Server server(job_of(1));
    const std::string key64(64, 'k'), key65(65, 'k');
    const std::string value866(866, 'V'), value867(867, 'V');
    const auto put = [&](const std::string& key, const std::string& value) {
        return send(server, 0, "cmd=put kvsname=kvs_2315_0 key=" + key + " value=" + value);
    };
    const auto get = [&](const std::string& key) {
        return send(server, 0, "cmd=get kvsname=kvs_2315_0 key=" + key);
    };
    EXPECT_EQ(put(key64, value866), "r0 cmd=put_result rc=0 msg=success");
    EXPECT_EQ(get(key64), "r0 cmd=get_result rc=0 msg=success value=" + value866);
    EXPECT_EQ(put(key65, "v"), "r0 cmd=put_result rc=-1 msg=key_too_long");
    EXPECT_EQ(get(key65), "r0 cmd=get_result rc=-1 msg=key_too_long value=unknown");
    EXPECT_EQ(put("big", value867), "r0 cmd=put_result rc=-1 msg=value_too_long");
    EXPECT_EQ(get("big"), "r0 cmd=get_result rc=-1 msg=key_big_not_found value=unknown");
}

TEST(PmiServer, ServerKeysThatCannotGoOnTheWireAreNotFound) {
    JobInfo job = job_of(1);
    job.server_keys["PMI_process_mapping"] = "(vector," + std::string(866, '0');
    job.server_keys["spaced"] = "a b";
    job.server_keys["PMI_dead_processes"] = "";
    job.server_keys["longest"] = std::string(866, 'x');
    Server server(job);
    EXPECT_EQ(send(server, 0, "cmd=get kvsname=kvs_2315_0 key=PMI_process_mapping"),
              "r0 cmd=get_result rc=-1 msg=key_PMI_process_mapping_not_found value=unknown");
    EXPECT_EQ(send(server, 0, "cmd=get kvsname=kvs_2315_0 key=spaced"),
              "r0 cmd=get_result rc=-1 msg=key_spaced_not_found value=unknown");
    EXPECT_EQ(send(server, 0, "cmd=get kvsname=kvs_2315_0 key=PMI_dead_processes"),
              "r0 cmd=get_result rc=0 msg=success value=");
    EXPECT_EQ(send(server, 0, "cmd=get kvsname=kvs_2315_0 key=longest"),
              "r0 cmd=get_result rc=0 msg=success value=" + std::string(866, 'x'));
    // Still the server's: a task cannot put them.
    EXPECT_EQ(send(server, 0, "cmd=put kvsname=kvs_2315_0 key=spaced value=ab"),
              "r0 cmd=put_result rc=-1 msg=key_is_reserved_by_the_server");
}

TEST(PmiServer, AbortIsNotAnsweredAndTheFirstCodeWins) {
    Server server(job_of(2));
    EXPECT_EQ(outcome(server.receive(1, "cmd=abort exitcode=7\ncmd=abort exitcode=9\n")),
              "abort 7 by r1");
    EXPECT_EQ(send(server, 0, "cmd=abort exitcode=3"), "abort 3 by r0");
}

// MPICH's PMI_Spawn_multiple: one block per app, numbered 1..totspawns in
// spawnssofar, then it waits for one reply.
TEST(PmiServer, SpawnIsRefusedAfterTheLastBlock) {
    Server server(job_of(2));
    const std::string block1 =
        "mcmd=spawn\nnprocs=2\nexecname=/bin/worker\ntotspawns=2\nspawnssofar=1\n"
        "arg1=a b=c\nargcnt=1\npreput_num=1\npreput_key_0=k\npreput_val_0=v\n"
        "info_num=0\nendcmd\n";
    const std::string block2 =
        "mcmd=spawn\nnprocs=1\nexecname=/bin/other\ntotspawns=2\nspawnssofar=2\n"
        "argcnt=0\npreput_num=0\ninfo_num=0\ncmd=finalize\nendcmd\n";
    EXPECT_EQ(outcome(server.receive(0, block1)), "");
    EXPECT_EQ(outcome(server.receive(0, block2)),
              "r0 cmd=spawn_result rc=-1 msg=spawn_not_supported");
    EXPECT_FALSE(server.finalized(0));  // a line inside a block is not a request
    EXPECT_EQ(send(server, 0, "cmd=get_appnum"), "r0 cmd=appnum appnum=0");

    // Without counters, each block is answered.
    EXPECT_EQ(outcome(server.receive(1, "mcmd=spawn\nnprocs=1\nexecname=x\nendcmd\n")),
              "r1 cmd=spawn_result rc=-1 msg=spawn_not_supported");
}

TEST(PmiServer, SpawnBlockLinesAreBoundedToo) {
    Server server(job_of(1));
    EXPECT_EQ(outcome(server.receive(0, "mcmd=spawn\narg1=" + std::string(1018, 'a') + "\n")), "");
    const Effects effects = server.receive(0, "arg2=" + std::string(1019, 'a') + "\n");
    ASSERT_TRUE(effects.protocol_error);
    EXPECT_TRUE(effects.protocol_error->starts_with("pmi: a line longer than 1024 bytes"));
}

// The observed sequences of MPICH 4.0.2 (specs: pmi1-wire.md, section 7),
// as "r<rank> -> request" and "r<rank> <- reply" lines; the replies of each
// request follow it. Where gantry answers differently from the test server
// recorded there, the transcript says what gantry sends:
// - maxes: 64/64/866, the values MPICH would clamp 256/64/1024 to;
// - a completed barrier answers in rank order (each rank on its own socket,
//   so the order across ranks means nothing to the tasks).
struct Transcript {
    std::vector<std::uint32_t> rank;
    std::vector<std::string> request;
    std::vector<std::string> replies;  // what follows each request
};

Transcript parse_transcript(std::string_view text) {
    Transcript t;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        while (line.starts_with(' '))
            line.remove_prefix(1);
        if (line.empty())
            continue;
        const std::string rank(line.substr(0, 2));
        const std::string_view arrow = line.substr(3, 2);
        const std::string rest(line.substr(6));
        if (arrow == "->") {
            t.rank.push_back(static_cast<std::uint32_t>(rank[1] - '0'));
            t.request.push_back(rest);
            t.replies.emplace_back();
        } else {
            std::string& replies = t.replies.back();
            replies += (replies.empty() ? "" : "\n") + rank + " " + rest;
        }
    }
    return t;
}

void replay(Server& server, std::string_view text) {
    const Transcript t = parse_transcript(text);
    ASSERT_FALSE(t.request.empty());
    for (std::size_t i = 0; i < t.request.size(); ++i)
        EXPECT_EQ(send(server, t.rank[i], t.request[i]), t.replies[i])
            << "r" << t.rank[i] << " -> " << t.request[i];
}

std::string substituted(std::string text, std::string_view name, std::string_view value) {
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at))
        text.replace(at, name.size(), value);
    return text;
}

// A UCX worker address as MPICH puts it: 436 hex digits.
std::string ucx_address(std::string_view start) {
    std::string hex(start);
    const std::string_view digits = "0123456789ABCDEF";
    while (hex.size() < 436)
        hex += digits[(hex.size() * 7) % 16];
    return hex;
}

TEST(PmiServer, ObservedSequenceOneTask) {
    JobInfo job = job_of(1, "");
    job.kvsname = "kvs_2139_0";
    Server server(job);
    replay(server, R"(
        r0 -> cmd=init pmi_version=1 pmi_subversion=1
        r0 <- cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0
        r0 -> cmd=get_maxes
        r0 <- cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866
        r0 -> cmd=get_appnum
        r0 <- cmd=appnum appnum=0
        r0 -> cmd=get_my_kvsname
        r0 <- cmd=my_kvsname kvsname=kvs_2139_0
        r0 -> cmd=barrier_in
        r0 <- cmd=barrier_out
        r0 -> cmd=barrier_in
        r0 <- cmd=barrier_out
        r0 -> cmd=finalize
        r0 <- cmd=finalize_ack
    )");
    EXPECT_TRUE(server.finalized(0));
}

TEST(PmiServer, ObservedSequenceTwoTasks) {
    const TaskMap map = TaskMap::block(1, 2).value();
    JobInfo job = job_of(2, process_mapping(map).value());
    Server server(job);
    std::string text = R"(
        r0 -> cmd=init pmi_version=1 pmi_subversion=1
        r0 <- cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0
        r0 -> cmd=get_maxes
        r0 <- cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866
        r1 -> cmd=init pmi_version=1 pmi_subversion=1
        r1 <- cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0
        r1 -> cmd=get_maxes
        r1 <- cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866
        r0 -> cmd=get_appnum
        r0 <- cmd=appnum appnum=0
        r0 -> cmd=get_my_kvsname
        r0 <- cmd=my_kvsname kvsname=kvs_2315_0
        r1 -> cmd=get_appnum
        r1 <- cmd=appnum appnum=0
        r0 -> cmd=get kvsname=kvs_2315_0 key=PMI_process_mapping
        r0 <- cmd=get_result rc=0 msg=success value=(vector,(0,1,2))
        r1 -> cmd=get_my_kvsname
        r1 <- cmd=my_kvsname kvsname=kvs_2315_0
        r1 -> cmd=get kvsname=kvs_2315_0 key=PMI_process_mapping
        r1 <- cmd=get_result rc=0 msg=success value=(vector,(0,1,2))
        r0 -> cmd=barrier_in
        r1 -> cmd=barrier_in
        r0 <- cmd=barrier_out
        r1 <- cmd=barrier_out
        r0 -> cmd=put kvsname=kvs_2315_0 key=-bcast-1-0 value=$BCAST
        r0 <- cmd=put_result rc=0 msg=success
        r0 -> cmd=barrier_in
        r1 -> cmd=barrier_in
        r0 <- cmd=barrier_out
        r1 <- cmd=barrier_out
        r1 -> cmd=get kvsname=kvs_2315_0 key=-bcast-1-0
        r1 <- cmd=get_result rc=0 msg=success value=$BCAST
        r1 -> cmd=put kvsname=kvs_2315_0 key=-allgather-shm-1-1 value=$UCX1
        r1 <- cmd=put_result rc=0 msg=success
        r1 -> cmd=barrier_in
        r0 -> cmd=put kvsname=kvs_2315_0 key=-allgather-shm-1-0 value=$UCX0
        r0 <- cmd=put_result rc=0 msg=success
        r0 -> cmd=barrier_in
        r0 <- cmd=barrier_out
        r1 <- cmd=barrier_out
        r1 -> cmd=get kvsname=kvs_2315_0 key=-allgather-shm-1-1
        r1 <- cmd=get_result rc=0 msg=success value=$UCX1
        r0 -> cmd=get kvsname=kvs_2315_0 key=-allgather-shm-1-0
        r0 <- cmd=get_result rc=0 msg=success value=$UCX0
        r0 -> cmd=barrier_in
        r1 -> cmd=barrier_in
        r0 <- cmd=barrier_out
        r1 <- cmd=barrier_out
        r1 -> cmd=finalize
        r1 <- cmd=finalize_ack
        r0 -> cmd=finalize
        r0 <- cmd=finalize_ack
    )";
    // "/dev/shm/mpich_shar_tmp237v1w" in hex, as MPICH broadcasts it.
    text =
        substituted(text, "$BCAST", "2F6465762F73686D2F6D706963685F736861725F746D70323337763177");
    text = substituted(text, "$UCX0", ucx_address("208A85920AACBDE745200063"));
    text = substituted(text, "$UCX1", ucx_address("20B8B928B3CA52BEAA200063"));
    replay(server, text);
    EXPECT_TRUE(server.finalized(0));
    EXPECT_TRUE(server.finalized(1));
}

struct MappingCase {
    std::string_view taskmap;  // RFC 34 JSON
    std::string_view mapping;  // "" for none
};

constexpr MappingCase kMappings[] = {
    {"[[0,1,2,1]]", "(vector,(0,1,2))"},                          // one node
    {"[[0,2,4,1]]", "(vector,(0,2,4))"},                          // block, 2 nodes x 4
    {"[[0,2,1,4]]", "(vector,(0,2,1),(0,2,1),(0,2,1),(0,2,1))"},  // cyclic over 2 nodes
    {"[[0,2,2,2]]", "(vector,(0,2,2),(0,2,2))"},                  // cyclic:2
    {"[[0,1,3,1],[1,1,5,1]]", "(vector,(0,1,3),(1,1,5))"},        // irregular
    {"[[1,1,2,1],[0,1,2,1]]", "(vector,(1,1,2),(0,1,2))"},        // nodes out of order
    {"[]", ""},                                                   // unknown
    // The longest: "(vector" + 106 x ",(0,1,1)" + ",(0,1,100)" + ")" = 866 bytes.
    {"[[0,1,1,106],[0,1,100,1]]",
     "(vector"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1),(0,1,1)"
     ",(0,1,100))"},
    {"[[0,1,1,106],[0,1,1000,1]]", ""},  // 867 bytes
    {"[[0,2,1,1000000]]", ""},           // a million blocks, refused before written out
    {"[[0,1,1,4294967295],[0,1,1,4294967295]]", ""},
};

TEST(PmiServer, ProcessMapping) {
    for (const auto& c : kMappings) {
        auto map = TaskMap::parse(c.taskmap);
        if (!map) {
            // Too many tasks for RFC 34: nothing to encode.
            EXPECT_EQ(c.mapping, "") << c.taskmap;
            continue;
        }
        const auto mapping = process_mapping(*map);
        EXPECT_EQ(mapping.value_or(""), c.mapping) << c.taskmap;
        EXPECT_EQ(mapping.has_value(), !c.mapping.empty()) << c.taskmap;
    }
    EXPECT_EQ(std::string_view(kMappings[7].mapping).size(), kValueMax);
}

TEST(PmiServer, ProcessMappingOfMappersMaps) {
    EXPECT_EQ(process_mapping(TaskMap::block(4, 8).value()), "(vector,(0,4,8))");
    EXPECT_EQ(process_mapping(TaskMap::cyclic(2, 2, 1).value()), "(vector,(0,2,1),(0,2,1))");
    const std::vector<TaskMap::NodeId> irregular = {0, 0, 0, 1, 1, 1, 1, 1};
    EXPECT_EQ(process_mapping(TaskMap::from_nodes(irregular)), "(vector,(0,1,3),(1,1,5))");
    // Round robin over 200 nodes, 2 tasks each: 2 blocks of 200 nodes.
    EXPECT_EQ(process_mapping(TaskMap::cyclic(200, 2, 1).value()), "(vector,(0,200,1),(0,200,1))");
    // Tasks alternating over 2 nodes in runs of irregular length.
    std::vector<TaskMap::NodeId> runs;
    for (int i = 0; i < 200; ++i)
        runs.insert(runs.end(), i % 3 + 1, i % 2);
    EXPECT_EQ(process_mapping(TaskMap::from_nodes(runs)), std::nullopt);
    EXPECT_EQ(process_mapping(TaskMap{}), std::nullopt);
}

// ---- one server per node, its barriers completed by an owner ----

JobInfo node_job(std::uint32_t size, IdSet local_ranks) {
    JobInfo job = job_of(size);
    job.local_ranks = std::move(local_ranks);
    return job;
}

std::string put_line(std::string_view key, std::string_view value) {
    return "cmd=put kvsname=kvs_2315_0 key=" + std::string(key) + " value=" + std::string(value);
}

std::string get_line(std::string_view key) {
    return "cmd=get kvsname=kvs_2315_0 key=" + std::string(key);
}

// The owner of a job over several nodes' servers, as a broker merging
// across nodes is: it keeps each node's puts as its barrier is reached and,
// once every node has reached it, completes it on each node with all of
// them merged.
class MergingOwner {
public:
    explicit MergingOwner(std::vector<Server*> nodes)
        : nodes_(std::move(nodes)), reached_(nodes_.size()) {}

    // The outcome of `rank`'s line on `node`'s server; when it was the last
    // node to reach the barrier, the outcome of the completion on each node
    // follows, node by node.
    std::string send(std::size_t node, std::uint32_t rank, std::string_view line) {
        Effects effects = nodes_[node]->receive(rank, std::string(line) + "\n");
        if (effects.local_barrier) {
            EXPECT_FALSE(reached_[node]) << "node " << node << " reached a barrier twice";
            reached_[node] = std::move(effects.local_barrier->puts);
            effects.local_barrier.reset();
        }
        std::string text = outcome(effects);
        for (const auto& puts : reached_)
            if (!puts)
                return text;
        KeyValues merged;
        for (auto& puts : reached_) {
            merged.insert(puts->begin(), puts->end());
            puts.reset();
        }
        for (Server* server : nodes_) {
            const auto done = server->barrier_complete(merged);
            EXPECT_TRUE(done) << done.error().str();
            if (done)
                text += (text.empty() ? "" : "\n") + outcome(*done);
        }
        return text;
    }

private:
    std::vector<Server*> nodes_;
    std::vector<std::optional<KeyValues>> reached_;  // by node, since the last completion
};

TEST(PmiServerNodes, GetFindsAnotherNodesPutOnlyAfterTheBarrier) {
    // 4 ranks, 2 on node A and 2 on node B.
    Server a(node_job(4, IdSet{0, 1}));
    Server b(node_job(4, IdSet{2, 3}));
    MergingOwner owner({&a, &b});
    constexpr std::size_t kA = 0, kB = 1;
    EXPECT_EQ(owner.send(kB, 3, put_line("-allgather-shm-1-3", "20B8B9")),
              "r3 cmd=put_result rc=0 msg=success");
    EXPECT_EQ(owner.send(kA, 0, put_line("-allgather-shm-1-0", "208A85")),
              "r0 cmd=put_result rc=0 msg=success");
    // Before the barrier: a node's own puts only.
    EXPECT_EQ(owner.send(kA, 0, get_line("-allgather-shm-1-3")),
              "r0 cmd=get_result rc=-1 msg=key_-allgather-shm-1-3_not_found value=unknown");
    EXPECT_EQ(owner.send(kA, 1, get_line("-allgather-shm-1-0")),
              "r1 cmd=get_result rc=0 msg=success value=208A85");
    EXPECT_EQ(owner.send(kB, 2, get_line("-allgather-shm-1-0")),
              "r2 cmd=get_result rc=-1 msg=key_-allgather-shm-1-0_not_found value=unknown");
    // Node A's barrier is reached but waits for the owner, which waits for node B.
    EXPECT_EQ(owner.send(kA, 1, "cmd=barrier_in"), "");
    EXPECT_EQ(owner.send(kA, 0, "cmd=barrier_in"), "");
    EXPECT_TRUE(a.barrier_waiting());
    EXPECT_EQ(owner.send(kB, 3, "cmd=barrier_in"), "");
    EXPECT_FALSE(b.barrier_waiting());
    EXPECT_EQ(owner.send(kB, 2, "cmd=barrier_in"),
              "r0 cmd=barrier_out\nr1 cmd=barrier_out\nr2 cmd=barrier_out\nr3 cmd=barrier_out");
    EXPECT_FALSE(a.barrier_waiting());
    // After it: every node's.
    EXPECT_EQ(owner.send(kA, 0, get_line("-allgather-shm-1-3")),
              "r0 cmd=get_result rc=0 msg=success value=20B8B9");
    EXPECT_EQ(owner.send(kB, 2, get_line("-allgather-shm-1-0")),
              "r2 cmd=get_result rc=0 msg=success value=208A85");
    EXPECT_EQ(owner.send(kB, 3, get_line("-allgather-shm-1-3")),
              "r3 cmd=get_result rc=0 msg=success value=20B8B9");
    // The next barrier works the same way, node B first this time.
    for (std::uint32_t rank : {2u, 3u})
        EXPECT_EQ(owner.send(kB, rank, "cmd=barrier_in"), "");
    EXPECT_EQ(owner.send(kA, 1, "cmd=barrier_in"), "");
    EXPECT_EQ(owner.send(kA, 0, "cmd=barrier_in"),
              "r0 cmd=barrier_out\nr1 cmd=barrier_out\nr2 cmd=barrier_out\nr3 cmd=barrier_out");
}

TEST(PmiServerNodes, LocalBarrierCarriesTheNodesPutsSinceThePreviousOne) {
    Server a(node_job(4, IdSet{0, 1}));
    EXPECT_EQ(send_alone(a, 0, put_line("k", "old")), "r0 cmd=put_result rc=0 msg=success");
    EXPECT_EQ(send_alone(a, 1, put_line("k", "new")), "r1 cmd=put_result rc=0 msg=success");
    EXPECT_EQ(send_alone(a, 1, put_line("empty", "")), "r1 cmd=put_result rc=0 msg=success");
    // A refused put is no put.
    EXPECT_EQ(send_alone(a, 0, put_line("PMI_process_mapping", "x")),
              "r0 cmd=put_result rc=-1 msg=key_is_reserved_by_the_server");
    EXPECT_EQ(send_alone(a, 0, "cmd=barrier_in"), "");
    const Effects reached = a.receive(1, "cmd=barrier_in\n");
    EXPECT_TRUE(reached.replies.empty());
    ASSERT_TRUE(reached.local_barrier);
    EXPECT_EQ(reached.local_barrier->puts, (KeyValues{{"empty", ""}, {"k", "new"}}));
    EXPECT_EQ(outcome(a.barrier_complete({}).value()), "r0 cmd=barrier_out\nr1 cmd=barrier_out");
    // The next barrier: only what was put since, and none at all.
    EXPECT_EQ(send_alone(a, 0, put_line("later", "1")), "r0 cmd=put_result rc=0 msg=success");
    EXPECT_EQ(send_alone(a, 0, "cmd=barrier_in"), "");
    EXPECT_EQ(send_alone(a, 1, "cmd=barrier_in"), "local barrier, puts: later=1");
    EXPECT_EQ(outcome(a.barrier_complete({}).value()), "r0 cmd=barrier_out\nr1 cmd=barrier_out");
    EXPECT_EQ(send_alone(a, 1, "cmd=barrier_in"), "");
    EXPECT_EQ(send_alone(a, 0, "cmd=barrier_in"), "local barrier, puts: (none)");
    // The node's puts are still its own with an empty merge.
    EXPECT_EQ(outcome(a.barrier_complete({}).value()), "r0 cmd=barrier_out\nr1 cmd=barrier_out");
    EXPECT_EQ(send_alone(a, 1, get_line("k")), "r1 cmd=get_result rc=0 msg=success value=new");
}

TEST(PmiServerNodes, BarrierWaitsForTheOwnerAndAnswersTheLocalRanksInRankOrder) {
    // Ranks 1, 3 and 4 of 6 on this node.
    Server server(node_job(6, IdSet{1, 3, 4}));
    EXPECT_EQ(server.local_ranks(), (IdSet{1, 3, 4}));
    EXPECT_EQ(send_alone(server, 4, "cmd=barrier_in"), "");
    EXPECT_EQ(send_alone(server, 1, "cmd=barrier_in"), "");
    EXPECT_FALSE(server.barrier_waiting());
    EXPECT_EQ(send_alone(server, 3, "cmd=barrier_in"), "local barrier, puts: (none)");
    EXPECT_TRUE(server.barrier_waiting());
    // Nothing answers the barrier but the owner; a rank in it that sends a
    // request anyway is answered after its barrier_out.
    EXPECT_EQ(send_alone(server, 3, "cmd=get_appnum"), "");
    EXPECT_EQ(send_alone(server, 1, put_line("late", "v")), "");
    EXPECT_EQ(send_alone(server, 4, "cmd=barrier_in"),
              R"(error: pmi: a second barrier_in before barrier_out in "cmd=barrier_in")");
    // Rank 4 made a protocol error: the barrier completes without it.
    EXPECT_EQ(outcome(server.barrier_complete({{"remote", "x"}}).value()),
              "r1 cmd=barrier_out\nr3 cmd=barrier_out\n"
              "r1 cmd=put_result rc=0 msg=success\nr3 cmd=appnum appnum=0");
    EXPECT_FALSE(server.barrier_waiting());
    // A put made inside the barrier goes with the next one.
    EXPECT_EQ(send_alone(server, 3, get_line("remote")),
              "r3 cmd=get_result rc=0 msg=success value=x");
    EXPECT_EQ(send_alone(server, 3, "cmd=barrier_in"), "");
    EXPECT_EQ(send_alone(server, 1, "cmd=barrier_in"), "");
}

TEST(PmiServerNodes, RequestsSentInsideABarrierAreAnsweredAfterItsBarrierOut) {
    Server server(node_job(2, IdSet{0, 1}));
    // Rank 0 does not wait for its barrier_out before its next requests: they
    // are handled at once, against the KVS as it is then, but answered after.
    EXPECT_EQ(outcome(server.receive(0, "cmd=barrier_in\ncmd=get_appnum\n" + get_line("r") + "\n")),
              "");
    EXPECT_EQ(send_alone(server, 1, put_line("r", "1")), "r1 cmd=put_result rc=0 msg=success");
    EXPECT_EQ(send_alone(server, 1, "cmd=barrier_in"), "local barrier, puts: r=1");
    EXPECT_EQ(outcome(server.barrier_complete({{"r", "1"}}).value()),
              "r0 cmd=barrier_out\nr1 cmd=barrier_out\nr0 cmd=appnum appnum=0\n"
              "r0 cmd=get_result rc=-1 msg=key_r_not_found value=unknown");
}

TEST(PmiServerNodes, ATaskThatLeavesAHandedOverBarrierIsNotAnswered) {
    Server server(node_job(4, IdSet{0, 1}));
    EXPECT_EQ(send_alone(server, 0, "cmd=barrier_in"), "");
    EXPECT_EQ(send_alone(server, 1, "cmd=barrier_in"), "local barrier, puts: (none)");
    server.disconnected(0);
    EXPECT_EQ(outcome(server.barrier_complete({}).value()), "r1 cmd=barrier_out");
    // One that leaves before the barrier is reached keeps it from reaching the owner.
    EXPECT_EQ(send_alone(server, 1, "cmd=barrier_in"), "");
    EXPECT_FALSE(server.barrier_waiting());
}

TEST(PmiServerNodes, BarrierCompleteWithoutABarrierWaitingIsRefused) {
    Server server(node_job(2, IdSet{0, 1}));
    const auto early = server.barrier_complete({{"k", "v"}});
    ASSERT_FALSE(early);
    EXPECT_EQ(early.error().str(), "pmi: barrier_complete without a barrier waiting for its owner");
    // Nothing changed: the put is not in, the barrier works as before.
    EXPECT_EQ(send_alone(server, 0, get_line("k")),
              "r0 cmd=get_result rc=-1 msg=key_k_not_found value=unknown");
    EXPECT_EQ(send_alone(server, 0, "cmd=barrier_in"), "");
    EXPECT_EQ(send_alone(server, 1, "cmd=barrier_in"), "local barrier, puts: (none)");
    EXPECT_EQ(outcome(server.barrier_complete({}).value()),
              "r0 cmd=barrier_out\nr1 cmd=barrier_out");
    const auto twice = server.barrier_complete({});
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().str(), "pmi: barrier_complete without a barrier waiting for its owner");
}

TEST(PmiServerNodes, MergedPutsNoTaskCouldMakeAreLeftOut) {
    Server server(node_job(2, IdSet{0}));
    EXPECT_EQ(send_alone(server, 0, "cmd=barrier_in"), "local barrier, puts: (none)");
    const KeyValues merged = {
        {"PMI_process_mapping", "(vector,(0,2,1))"},  // the server's
        {"spaced", "a b"},
        {"newline", "a\nb"},
        {"long", std::string(867, 'v')},
        {"longest", std::string(866, 'v')},
        {std::string(65, 'k'), "v"},
        {"", "v"},
        {"ok", "segments=3"},
    };
    EXPECT_EQ(outcome(server.barrier_complete(merged).value()), "r0 cmd=barrier_out");
    const std::string not_found = "r0 cmd=get_result rc=-1 msg=key_";
    EXPECT_EQ(send_alone(server, 0, get_line("PMI_process_mapping")),
              "r0 cmd=get_result rc=0 msg=success value=(vector,(0,1,2))");
    EXPECT_EQ(send_alone(server, 0, get_line("spaced")),
              not_found + "spaced_not_found value=unknown");
    EXPECT_EQ(send_alone(server, 0, get_line("newline")),
              not_found + "newline_not_found value=unknown");
    EXPECT_EQ(send_alone(server, 0, get_line("long")), not_found + "long_not_found value=unknown");
    EXPECT_EQ(send_alone(server, 0, get_line("longest")),
              "r0 cmd=get_result rc=0 msg=success value=" + std::string(866, 'v'));
    EXPECT_EQ(send_alone(server, 0, get_line("ok")),
              "r0 cmd=get_result rc=0 msg=success value=segments=3");
}

TEST(PmiServerNodes, ARankOfAnotherNodeIsAProtocolError) {
    Server a(node_job(4, IdSet{0, 1}));
    EXPECT_EQ(send_alone(a, 2, "cmd=get_maxes"),
              "error: pmi: rank 2 is not one of the 2 tasks on this node (of 4 in the job)");
    EXPECT_EQ(send_alone(a, 4, "cmd=get_maxes"),
              "error: pmi: rank 4 is not in this job of 4 tasks");
    EXPECT_FALSE(a.initialized(2));
    EXPECT_FALSE(a.finalized(2));
    a.disconnected(2);  // ignored
    EXPECT_EQ(send_alone(a, 1, "cmd=get_appnum"), "r1 cmd=appnum appnum=0");
    Server one(node_job(4, IdSet{3}));
    EXPECT_EQ(send_alone(one, 0, "cmd=init pmi_version=1 pmi_subversion=1"),
              "error: pmi: rank 0 is not one of the 1 task on this node (of 4 in the job)");
    // PMI_SIZE, universe size and app numbers stay the job's.
    JobInfo job = node_job(4, IdSet{2, 3});
    job.appnum_of_rank = {0, 0, 1, 1};
    job.universe_size = 8;
    Server b(job);
    EXPECT_EQ(send_alone(b, 3, "cmd=get_appnum"), "r3 cmd=appnum appnum=1");
    EXPECT_EQ(send_alone(b, 2, "cmd=get_universe_size"), "r2 cmd=universe_size size=8");
    EXPECT_EQ(send_alone(b, 2, "cmd=get kvsname=kvs_2315_0 key=PMI_process_mapping"),
              "r2 cmd=get_result rc=0 msg=success value=(vector,(0,1,2))");
}

TEST(PmiServerNodes, LocalRanksBeyondTheJobAreLeftOut) {
    Server server(node_job(4, IdSet{2, 3, 7}));
    EXPECT_EQ(server.local_ranks(), (IdSet{2, 3}));
    EXPECT_EQ(send_alone(server, 7, "cmd=get_maxes"),
              "error: pmi: rank 7 is not in this job of 4 tasks");
    EXPECT_EQ(send_alone(server, 2, "cmd=barrier_in"), "");
    EXPECT_EQ(send_alone(server, 3, "cmd=barrier_in"), "local barrier, puts: (none)");
    // Without local ranks, every rank of the job is local.
    EXPECT_EQ(Server(job_of(3)).local_ranks(), IdSet::range(0, 2));
    EXPECT_EQ(Server(job_of(0)).local_ranks(), IdSet{});
}

// A job on one node: a server whose ranks are all local, given explicitly
// or not, with an owner that answers at once, answers as it always did.
TEST(PmiServerNodes, OneNodeWithAnOwnerThatAnswersAtOnce) {
    for (const bool explicit_ranks : {false, true}) {
        SCOPED_TRACE(explicit_ranks);
        Server server(explicit_ranks ? node_job(4, IdSet::range(0, 3)) : job_of(4));
        EXPECT_EQ(send(server, 1, put_line("k", "v")), "r1 cmd=put_result rc=0 msg=success");
        EXPECT_EQ(send(server, 2, get_line("k")), "r2 cmd=get_result rc=0 msg=success value=v");
        for (std::uint32_t rank : {3u, 0u, 2u})
            EXPECT_EQ(send(server, rank, "cmd=barrier_in"), "");
        EXPECT_EQ(send(server, 1, "cmd=barrier_in"),
                  "r0 cmd=barrier_out\nr1 cmd=barrier_out\nr2 cmd=barrier_out\nr3 cmd=barrier_out");
        EXPECT_EQ(send(server, 0, get_line("k")), "r0 cmd=get_result rc=0 msg=success value=v");
        EXPECT_EQ(send(server, 4, "cmd=get_maxes"),
                  "error: pmi: rank 4 is not in this job of 4 tasks");
    }
}

}  // namespace
}  // namespace gantry::pmi
