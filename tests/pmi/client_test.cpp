// The PMI client: PMI-1 against gantry's own server state machine, both
// wires against a scripted launcher that answers badly or hangs up, from
// the environment a launcher sets, and under the real launchers (gantry
// run, mpiexec.hydra with a socket per task and with PMI_PORT, srun
// --mpi=pmi2).
#include "pmi/client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "pmi/server.h"
#include "support/run_command.h"

namespace gantry::pmi {
namespace {

using Lines = std::vector<std::string>;

std::array<int, 2> socket_pair() {
    int fds[2] = {-1, -1};
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    return {fds[0], fds[1]};
}

// Everything that can be read from `fd` now, or after `wait_ms` at most.
std::string read_available(int fd, int wait_ms = 0) {
    std::string text;
    char block[4096];
    for (;;) {
        pollfd ready{fd, POLLIN, 0};
        if (::poll(&ready, 1, text.empty() ? wait_ms : 0) != 1)
            return text;
        const ssize_t n = ::read(fd, block, sizeof block);
        if (n <= 0)
            return text;
        text.append(block, static_cast<std::size_t>(n));
    }
}

// ---------------------------------------------------------------------------
// Against gantry's own server: one thread serves every rank's socket, as the
// job shell does, completing each barrier at once with the node's puts.

class ServedJob {
public:
    explicit ServedJob(std::uint32_t size) : server_(job_of(size)) {
        for (std::uint32_t rank = 0; rank < size; ++rank) {
            const auto [served, client] = socket_pair();
            served_.push_back(served);
            client_fds_.push_back(client);
        }
        stop_ = socket_pair();
        thread_ = std::thread([this] { serve(); });
    }
    ~ServedJob() {
        (void)::write(stop_[1], "x", 1);
        thread_.join();
        for (const int fd : served_)
            if (fd >= 0)
                ::close(fd);
        ::close(stop_[0]);
        ::close(stop_[1]);
    }
    // The client end of `rank`'s socket, for Client::connect_fd to own.
    int client_fd(std::uint32_t rank) const { return client_fds_[rank]; }
    // Protocol errors the server reported, one a line.
    std::string protocol_errors() const { return protocol_errors_; }

private:
    static JobInfo job_of(std::uint32_t size) {
        JobInfo job;
        job.kvsname = "kvs_client_test";
        job.size = size;
        job.universe_size = size;
        job.appnum_of_rank.assign(size, 0);
        job.server_keys["PMI_process_mapping"] = "(vector,(0,1," + std::to_string(size) + "))";
        return job;
    }

    void serve() {
        for (;;) {
            std::vector<pollfd> ready;
            for (const int fd : served_)
                ready.push_back({fd, POLLIN, 0});
            ready.push_back({stop_[0], POLLIN, 0});
            if (::poll(ready.data(), ready.size(), -1) < 0)
                continue;
            if (ready.back().revents != 0)
                return;
            for (std::uint32_t rank = 0; rank < served_.size(); ++rank) {
                if (served_[rank] < 0 || ready[rank].revents == 0)
                    continue;
                char block[4096];
                const ssize_t n = ::read(served_[rank], block, sizeof block);
                if (n <= 0) {
                    server_.disconnected(rank);
                    ::close(served_[rank]);
                    served_[rank] = -1;
                    continue;
                }
                Effects effects =
                    server_.receive(rank, std::string_view(block, static_cast<std::size_t>(n)));
                if (effects.protocol_error)
                    protocol_errors_ += *effects.protocol_error + "\n";
                if (effects.local_barrier) {
                    auto done = server_.barrier_complete(effects.local_barrier->puts);
                    for (auto& reply : done->replies)
                        effects.replies.push_back(std::move(reply));
                }
                for (const auto& reply : effects.replies)
                    if (served_[reply.rank] >= 0)
                        (void)::send(served_[reply.rank], reply.line.data(), reply.line.size(),
                                     MSG_NOSIGNAL);
            }
        }
    }

    Server server_;
    std::vector<int> served_;
    std::vector<int> client_fds_;
    std::array<int, 2> stop_{-1, -1};
    std::string protocol_errors_;
    std::thread thread_;
};

TEST(PmiClient, TalksToGantrysServer) {
    ServedJob job(1);
    auto client = Client::connect_fd(job.client_fd(0), 0, 1);
    ASSERT_TRUE(client) << client.error().str();
    EXPECT_EQ(client->rank(), 0);
    EXPECT_EQ(client->size(), 1);
    EXPECT_EQ(client->appnum(), 0);
    EXPECT_EQ(client->kvs_name(), "kvs_client_test");
    EXPECT_EQ(client->key_max(), 64u);
    EXPECT_EQ(client->value_max(), 866u);

    ASSERT_TRUE(client->put("addr-0", "tcp://127.0.0.1:7000"));
    ASSERT_TRUE(client->put("blob", std::string(866, 'F')));
    ASSERT_TRUE(client->barrier());
    EXPECT_EQ(client->get("addr-0").value(), "tcp://127.0.0.1:7000");
    EXPECT_EQ(client->get("blob").value(), std::string(866, 'F'));
    EXPECT_EQ(client->get("PMI_process_mapping").value(), "(vector,(0,1,1))");

    const auto missing = client->get("addr-1");
    ASSERT_FALSE(missing);
    EXPECT_TRUE(missing.error().is_not_found());
    EXPECT_EQ(missing.error().str(),
              "pmi: get: key \"addr-1\" not found (rc=-1 msg=key_addr-1_not_found)");

    // The server's refusal, as it said it.
    const auto reserved = client->put("PMI_process_mapping", "(vector,(0,1,2))");
    ASSERT_FALSE(reserved);
    EXPECT_EQ(reserved.error().str(),
              "pmi: put refused by the launcher: rc=-1 msg=key_is_reserved_by_the_server");

    ASSERT_TRUE(client->finalize());
    EXPECT_EQ(client->put("k", "v").error().str(), "pmi: put after finalize");
    EXPECT_EQ(client->barrier().error().str(), "pmi: barrier_in after finalize");
    EXPECT_EQ(client->get("k").error().str(), "pmi: get after finalize");
    EXPECT_EQ(client->finalize().error().str(), "pmi: finalize after finalize");
    EXPECT_EQ(job.protocol_errors(), "");
}

TEST(PmiClient, ThreeRanksExchangeThroughABarrier) {
    constexpr int kSize = 3;
    ServedJob job(kSize);
    std::array<std::string, kSize> seen;
    std::vector<std::thread> ranks;
    for (int rank = 0; rank < kSize; ++rank) {
        ranks.emplace_back([&, rank] {
            auto client = Client::connect_fd(job.client_fd(rank), rank, kSize);
            if (!client) {
                seen[rank] = client.error().str();
                return;
            }
            const std::string me = std::to_string(rank);
            std::string text = "rank " + me + " of " + std::to_string(client->size()) + ":";
            const auto put = client->put("addr-" + me, "value-" + me);
            const auto barrier = client->barrier();
            for (int other = 0; other < kSize; ++other) {
                const auto value = client->get("addr-" + std::to_string(other));
                text += " " + (value ? *value : value.error().str());
            }
            const auto finalized = client->finalize();
            for (const Status* status : {&put, &barrier, &finalized})
                if (!*status)
                    text += " / " + status->error().str();
            seen[rank] = text;
        });
    }
    for (auto& thread : ranks)
        thread.join();
    EXPECT_EQ(seen[0], "rank 0 of 3: value-0 value-1 value-2");
    EXPECT_EQ(seen[1], "rank 1 of 3: value-0 value-1 value-2");
    EXPECT_EQ(seen[2], "rank 2 of 3: value-0 value-1 value-2");
    EXPECT_EQ(job.protocol_errors(), "");
}

// ---------------------------------------------------------------------------
// A scripted launcher: its replies are written before the client starts and
// its end is then shut for writing, so that the client reads them, then end
// of file. What the client sent is read afterwards.

class ScriptedLauncher {
public:
    explicit ScriptedLauncher(std::string_view replies) {
        const auto [launcher, client] = socket_pair();
        launcher_ = launcher;
        client_ = client;
        EXPECT_EQ(::write(launcher_, replies.data(), replies.size()),
                  static_cast<ssize_t>(replies.size()));
        ::shutdown(launcher_, SHUT_WR);
    }
    ~ScriptedLauncher() { ::close(launcher_); }
    int client_fd() const { return client_; }  // owned by the Client
    std::string requests() const { return read_available(launcher_); }
    void hang_up() {
        ::close(launcher_);
        launcher_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }

private:
    int launcher_ = -1;
    int client_ = -1;
};

constexpr std::string_view kHandshake =
    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
    "cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866\n"
    "cmd=appnum appnum=0\n"
    "cmd=my_kvsname kvsname=kvs_7\n";
constexpr std::string_view kHandshakeRequests =
    "cmd=init pmi_version=1 pmi_subversion=1\n"
    "cmd=get_maxes\n"
    "cmd=get_appnum\n"
    "cmd=get_my_kvsname\n";

struct HandshakeCase {
    std::string_view replies;
    std::string_view error;
};

const std::string kLongLine(2000, 'a');

const HandshakeCase kBadHandshakes[] = {
    {"", "pmi: the launcher closed the connection while waiting for response_to_init"},
    {"cmd=response_to_init rc=0",
     "pmi: the launcher closed the connection while waiting for response_to_init"},
    {"garbage\n", "pmi: unreadable reply to init: a token without '=' at offset 0 in \"garbage\""},
    {"cmd=response_to_init =0\n",
     "pmi: unreadable reply to init: '=' without a key at offset 21 in \"cmd=response_to_init "
     "=0\""},
    {"\n", "pmi: expected cmd=response_to_init in reply to init, got \"\""},
    {"cmd=maxes kvsname_max=64\n",
     "pmi: expected cmd=response_to_init in reply to init, got \"cmd=maxes kvsname_max=64\""},
    {"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n",
     "pmi: init refused by the launcher: rc=-1"},
    {"cmd=response_to_init rc=1 msg=version_mismatch\n",
     "pmi: init refused by the launcher: rc=1 msg=version_mismatch"},
    {"cmd=response_to_init rc=0\n",
     "pmi: the launcher closed the connection while waiting for maxes"},
    {"cmd=response_to_init rc=0\ncmd=maxes kvsname_max=64 keylen_max=64\n",
     "pmi: reply to get_maxes without vallen_max= in \"cmd=maxes kvsname_max=64 keylen_max=64\""},
    {"cmd=response_to_init rc=0\ncmd=maxes kvsname_max=64 keylen_max=x vallen_max=866\n",
     "pmi: reply to get_maxes: keylen_max is not a positive number in \"cmd=maxes "
     "kvsname_max=64 keylen_max=x vallen_max=866\""},
    {"cmd=response_to_init rc=0\ncmd=maxes kvsname_max=900 keylen_max=200 vallen_max=866\n",
     "pmi: reply to get_maxes leaves no room for a value in \"cmd=maxes kvsname_max=900 "
     "keylen_max=200 vallen_max=866\""},
    {"cmd=response_to_init rc=0\ncmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866\n"
     "cmd=appnum\n",
     "pmi: reply to get_appnum without a numeric appnum= in \"cmd=appnum\""},
    {"cmd=response_to_init rc=0\ncmd=maxes kvsname_max=64 keylen_max=64 vallen_max=866\n"
     "cmd=appnum appnum=0\ncmd=my_kvsname kvsname=\n",
     "pmi: reply to get_my_kvsname without a kvsname= in \"cmd=my_kvsname kvsname=\""},
};

TEST(PmiClient, BadHandshakesAreOneLineErrors) {
    for (const auto& c : kBadHandshakes) {
        ScriptedLauncher launcher(c.replies);
        const auto client = Client::connect_fd(launcher.client_fd(), 0, 1);
        ASSERT_FALSE(client) << c.replies;
        EXPECT_EQ(client.error().str(), c.error) << c.replies;
    }
}

TEST(PmiClient, AReplyLineLongerThanTheLimitIsRefused) {
    ScriptedLauncher launcher(kLongLine + "\n");
    const auto client = Client::connect_fd(launcher.client_fd(), 0, 1);
    ASSERT_FALSE(client);
    EXPECT_EQ(client.error().str(), "pmi: the reply to init is longer than 1024 bytes: \"" +
                                        std::string(80, 'a') + "\"...");
}

TEST(PmiClient, HandshakeAsHydraAnswersIt) {
    // Hydra puts rc= last and announces a kvsname of 256 bytes, which MPICH
    // clamps the value length for: 1024 - 256 - 64 - 30.
    ScriptedLauncher launcher(
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
        "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"
        "cmd=appnum appnum=2\n"
        "cmd=my_kvsname kvsname=kvs_2976_0_485389675_vm\n");
    auto client = Client::connect_fd(launcher.client_fd(), 2, 4);
    ASSERT_TRUE(client) << client.error().str();
    EXPECT_EQ(launcher.requests(), kHandshakeRequests);
    EXPECT_EQ(client->rank(), 2);
    EXPECT_EQ(client->size(), 4);
    EXPECT_EQ(client->appnum(), 2);
    EXPECT_EQ(client->kvs_name(), "kvs_2976_0_485389675_vm");
    EXPECT_EQ(client->key_max(), 64u);
    EXPECT_EQ(client->value_max(), 674u);
}

TEST(PmiClient, RequestsAndRepliesAfterTheHandshake) {
    ScriptedLauncher launcher(std::string(kHandshake) +
                              "cmd=put_result rc=0 msg=success\n"
                              "rc=0 cmd=barrier_out\n"
                              "cmd=get_result rc=0 msg=success value=segments=3\n"
                              "cmd=get_result rc=0 msg=success value=\n"
                              "cmd=finalize_ack\n");
    auto client = Client::connect_fd(launcher.client_fd(), 0, 2);
    ASSERT_TRUE(client) << client.error().str();
    EXPECT_TRUE(client->put("-bcast-1-0", "2F6465762F"));
    EXPECT_TRUE(client->barrier());
    EXPECT_EQ(client->get("blob").value(), "segments=3");
    EXPECT_EQ(client->get("empty").value(), "");
    EXPECT_TRUE(client->finalize());
    EXPECT_EQ(launcher.requests(), std::string(kHandshakeRequests) +
                                       "cmd=put kvsname=kvs_7 key=-bcast-1-0 value=2F6465762F\n"
                                       "cmd=barrier_in\n"
                                       "cmd=get kvsname=kvs_7 key=blob\n"
                                       "cmd=get kvsname=kvs_7 key=empty\n"
                                       "cmd=finalize\n");
}

// One request after a good handshake, with the launcher's reply (nothing:
// it hangs up).
struct RequestCase {
    std::string_view name;
    std::function<std::string(Client&)> request;  // the error, or "ok"
    std::string_view reply;
    std::string_view error;
};

std::string outcome(const Status& status) {
    return status ? "ok" : status.error().str();
}
std::string outcome(const Result<std::string>& value) {
    return value ? "value " + *value : value.error().str();
}

const RequestCase kBadReplies[] = {
    {"barrier, hung up", [](Client& c) { return outcome(c.barrier()); }, "",
     "pmi: the launcher closed the connection while waiting for barrier_out"},
    {"put, hung up", [](Client& c) { return outcome(c.put("k", "v")); }, "",
     "pmi: the launcher closed the connection while waiting for put_result"},
    {"get, hung up", [](Client& c) { return outcome(c.get("k")); }, "",
     "pmi: the launcher closed the connection while waiting for get_result"},
    {"finalize, hung up", [](Client& c) { return outcome(c.finalize()); }, "",
     "pmi: the launcher closed the connection while waiting for finalize_ack"},
    {"barrier, half a line", [](Client& c) { return outcome(c.barrier()); }, "cmd=barrier_o",
     "pmi: the launcher closed the connection while waiting for barrier_out"},
    {"barrier, refused", [](Client& c) { return outcome(c.barrier()); },
     "cmd=barrier_out rc=-1 msg=rank_died\n",
     "pmi: barrier_in refused by the launcher: rc=-1 msg=rank_died"},
    {"barrier, another reply", [](Client& c) { return outcome(c.barrier()); },
     "cmd=put_result rc=0\n",
     "pmi: expected cmd=barrier_out in reply to barrier_in, got \"cmd=put_result rc=0\""},
    {"put, refused", [](Client& c) { return outcome(c.put("k", "v")); },
     "cmd=put_result rc=-1 msg=key_too_long\n",
     "pmi: put refused by the launcher: rc=-1 msg=key_too_long"},
    {"put, garbage", [](Client& c) { return outcome(c.put("k", "v")); }, "\x01\x02\n",
     "pmi: unreadable reply to put: a token without '=' at offset 0 in \"\\x01\\x02\""},
    {"get, not found", [](Client& c) { return outcome(c.get("k")); },
     "cmd=get_result rc=-1 msg=key_k_not_found value=unknown\n",
     "pmi: get: key \"k\" not found (rc=-1 msg=key_k_not_found)"},
    {"get, not found without msg", [](Client& c) { return outcome(c.get("k")); },
     "cmd=get_result rc=1\n", "pmi: get: key \"k\" not found (rc=1)"},
    {"get, no value", [](Client& c) { return outcome(c.get("k")); },
     "cmd=get_result rc=0 msg=success\n",
     "pmi: reply to get without value= in \"cmd=get_result rc=0 msg=success\""},
    {"finalize, another reply", [](Client& c) { return outcome(c.finalize()); }, "cmd=finalize\n",
     "pmi: expected cmd=finalize_ack in reply to finalize, got \"cmd=finalize\""},
};

TEST(PmiClient, BadRepliesAreOneLineErrors) {
    for (const auto& c : kBadReplies) {
        ScriptedLauncher launcher(std::string(kHandshake) + std::string(c.reply));
        auto client = Client::connect_fd(launcher.client_fd(), 0, 1);
        ASSERT_TRUE(client) << c.name << ": " << client.error().str();
        EXPECT_EQ(c.request(*client), c.error) << c.name;
    }
}

TEST(PmiClient, NotFoundIsItsOwnKind) {
    ScriptedLauncher launcher(std::string(kHandshake) +
                              "cmd=get_result rc=-1 msg=key_k_not_found value=unknown\n"
                              "cmd=get_result rc=0\n");
    auto client = Client::connect_fd(launcher.client_fd(), 0, 1);
    ASSERT_TRUE(client) << client.error().str();
    EXPECT_EQ(client->get("k").error().kind(), ErrorKind::kNotFound);
    EXPECT_EQ(client->get("k").error().kind(), ErrorKind::kInvalid);
}

TEST(PmiClient, ALauncherGoneBeforeTheRequestIsAnError) {
    ScriptedLauncher launcher(kHandshake);
    auto client = Client::connect_fd(launcher.client_fd(), 0, 1);
    ASSERT_TRUE(client) << client.error().str();
    launcher.hang_up();
    EXPECT_EQ(outcome(client->barrier()),
              "pmi: the launcher closed the connection before barrier_in was sent");
    EXPECT_EQ(outcome(client->put("k", "v")),
              "pmi: the launcher closed the connection before put was sent");
}

// What put and get refuse without asking the launcher.
struct RefusedCase {
    std::string key;
    std::string value;
    std::string error;
};

const RefusedCase kRefusedPuts[] = {
    {"", "v", "pmi: put: an empty key"},
    {std::string(65, 'k'), "v",
     "pmi: put: key \"" + std::string(65, 'k') + "\" is longer than the launcher's 64 bytes"},
    {"a=b", "v", "pmi: put: key \"a=b\" holds '='"},
    {"a b", "v", "pmi: put: key \"a b\" holds a space"},
    {"a\nb", "v", "pmi: put: key \"a\\nb\" holds a control byte"},
    {"k", std::string(867, 'v'),
     "pmi: put: the value of \"k\" is 867 bytes, longer than the "
     "launcher's 866"},
    {"k", "tcp://host 7000", "pmi: put: the value of \"k\" holds a space: \"tcp://host 7000\""},
    {"k", "line\n", "pmi: put: the value of \"k\" holds a control byte: \"line\\n\""},
    {"k", std::string("a\0b", 3), "pmi: put: the value of \"k\" holds a control byte: \"a\\x00b\""},
};

TEST(PmiClient, PutsThatCannotGoOnTheWireAreRefused) {
    ScriptedLauncher launcher(kHandshake);
    auto client = Client::connect_fd(launcher.client_fd(), 0, 1);
    ASSERT_TRUE(client) << client.error().str();
    (void)launcher.requests();
    for (const auto& c : kRefusedPuts)
        EXPECT_EQ(outcome(client->put(c.key, c.value)), c.error) << c.key;
    EXPECT_EQ(outcome(client->get("a b")), "pmi: get: key \"a b\" holds a space");
    EXPECT_EQ(outcome(client->get("")), "pmi: get: an empty key");
    // Nothing was sent.
    EXPECT_EQ(launcher.requests(), "");
}

TEST(PmiClient, AbortSendsTheCodeAndTheMessageAsOneWord) {
    ScriptedLauncher launcher(kHandshake);
    auto client = Client::connect_fd(launcher.client_fd(), 0, 1);
    ASSERT_TRUE(client) << client.error().str();
    (void)launcher.requests();
    EXPECT_TRUE(client->abort(7, "broker 3 failed: no\troute"));
    EXPECT_TRUE(client->abort(1, ""));
    EXPECT_EQ(launcher.requests(),
              "cmd=abort exitcode=7 message=broker_3_failed:_no_route\n"
              "cmd=abort exitcode=1\n");
}

TEST(PmiClient, ConnectFdRefusesANegativeFd) {
    EXPECT_EQ(Client::connect_fd(-1, 0, 1).error().str(),
              "pmi: connect_fd: -1 is not a file descriptor");
}

// ---------------------------------------------------------------------------
// From the environment.

using Variables = std::map<std::string, std::string>;

Client::Environment environment_of(const Variables& variables) {
    return [variables](const char* name) -> std::optional<std::string> {
        if (const auto found = variables.find(name); found != variables.end())
            return found->second;
        return std::nullopt;
    };
}

TEST(PmiClient, NoLauncherInTheEnvironment) {
    for (const Variables& variables : {Variables{}, Variables{{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}},
                                       Variables{{"PMI_ID", "1"}}}) {
        const auto client = Client::from_environment(environment_of(variables));
        ASSERT_TRUE(client) << client.error().str();
        EXPECT_FALSE(client->has_value());
    }
    for (const char* name : {"PMI_FD", "PMI_PORT"})
        ::unsetenv(name);
    const auto client = Client::from_environment();
    ASSERT_TRUE(client) << client.error().str();
    EXPECT_FALSE(client->has_value());
}

struct EnvironmentCase {
    Variables variables;
    std::string_view error;
};

TEST(PmiClient, BadEnvironmentsAreOneLineErrors) {
    const int spare = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const std::string open_fd = std::to_string(spare);
    const EnvironmentCase cases[] = {
        {{{"PMI_FD", "abc"}}, "pmi: PMI_FD=\"abc\" is not a number"},
        {{{"PMI_FD", ""}}, "pmi: PMI_FD=\"\" is not a number"},
        {{{"PMI_FD", "7x"}}, "pmi: PMI_FD=\"7x\" is not a number"},
        {{{"PMI_FD", "-1"}}, "pmi: PMI_FD=-1 is not a file descriptor"},
        {{{"PMI_FD", "987"}}, "pmi: PMI_FD=987: Bad file descriptor"},
        {{{"PMI_FD", open_fd}, {"PMI_RANK", "two"}}, "pmi: PMI_RANK=\"two\" is not a number"},
        {{{"PMI_FD", open_fd}, {"PMI_RANK", "2"}, {"PMI_SIZE", "2"}},
         "pmi: PMI_RANK=2 is not a rank of a job of 2"},
        {{{"PMI_FD", open_fd}, {"PMI_SIZE", "0"}}, "pmi: PMI_SIZE=0 is not a job size"},
        {{{"PMI_PORT", "localhost"}}, "pmi: PMI_PORT=\"localhost\" is not host:port"},
        {{{"PMI_PORT", ":7000"}}, "pmi: PMI_PORT=\":7000\" is not host:port"},
        {{{"PMI_PORT", "127.0.0.1:"}, {"PMI_ID", "0"}},
         "pmi: PMI_PORT=\"127.0.0.1:\" is not host:port"},
        {{{"PMI_PORT", "127.0.0.1:1"}, {"PMI_RANK", "x"}}, "pmi: PMI_RANK=\"x\" is not a number"},
        {{{"PMI_PORT", "127.0.0.1:1"}, {"PMI_ID", "0 cmd=abort"}},
         "pmi: PMI_ID=\"0 cmd=abort\" is not a number"},
        {{{"PMI_PORT", "127.0.0.1:1"}, {"PMI_ID", "0"}},
         "pmi: cannot connect to PMI_PORT=\"127.0.0.1:1\": Connection refused"},
    };
    for (const auto& c : cases) {
        const auto client = Client::from_environment(environment_of(c.variables));
        ASSERT_FALSE(client) << c.error;
        EXPECT_EQ(client.error().str(), c.error);
    }
    // The descriptor is the caller's until the handshake starts.
    EXPECT_EQ(::fcntl(spare, F_GETFD), FD_CLOEXEC);
    ::close(spare);
}

TEST(PmiClient, FromPmiFd) {
    ScriptedLauncher launcher(kHandshake);
    const int fd = launcher.client_fd();
    ::fcntl(fd, F_SETFD, 0);  // as inherited across exec
    auto client = Client::from_environment(
        environment_of({{"PMI_FD", std::to_string(fd)}, {"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}));
    ASSERT_TRUE(client) << client.error().str();
    ASSERT_TRUE(client->has_value());
    EXPECT_EQ((*client)->rank(), 1);
    EXPECT_EQ((*client)->size(), 2);
    EXPECT_EQ((*client)->kvs_name(), "kvs_7");
    EXPECT_EQ(::fcntl(fd, F_GETFD), FD_CLOEXEC);
    EXPECT_EQ(launcher.requests(), kHandshakeRequests);
}

// A TCP listener on loopback that answers the first connection with
// `replies`, then reads what the client sends until it closes.
class ListeningLauncher {
public:
    explicit ListeningLauncher(std::string replies) {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
        EXPECT_EQ(::listen(listener_, 1), 0);
        socklen_t length = sizeof address;
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this, replies] {
            pollfd ready{listener_, POLLIN, 0};
            if (::poll(&ready, 1, 10000) != 1)
                return;
            const int peer = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            (void)::write(peer, replies.data(), replies.size());
            ::shutdown(peer, SHUT_WR);
            for (std::string more; !(more = read_available(peer, 10000)).empty();)
                requests_ += more;
            ::close(peer);
        });
    }
    ~ListeningLauncher() {
        if (thread_.joinable())
            thread_.join();
        ::close(listener_);
    }
    std::string port() const { return "127.0.0.1:" + std::to_string(port_); }
    // After the client closed its socket.
    std::string requests() {
        thread_.join();
        return requests_;
    }

private:
    int listener_ = -1;
    int port_ = 0;
    std::string requests_;
    std::thread thread_;
};

TEST(PmiClient, FromPmiPortWithPmiId) {
    ListeningLauncher launcher("cmd=initack\ncmd=set size=4\ncmd=set rank=3\ncmd=set debug=0\n" +
                               std::string(kHandshake) + "cmd=finalize_ack\n");
    auto client = Client::from_environment(environment_of(
        {{"PMI_PORT", launcher.port()}, {"PMI_ID", "3"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "1"}}));
    ASSERT_TRUE(client) << client.error().str();
    ASSERT_TRUE(client->has_value());
    EXPECT_EQ((*client)->rank(), 3);
    EXPECT_EQ((*client)->size(), 4);
    EXPECT_TRUE((*client)->finalize());
    EXPECT_EQ(launcher.requests(),
              "cmd=initack pmiid=3\n" + std::string(kHandshakeRequests) + "cmd=finalize\n");
}

TEST(PmiClient, FromPmiPortWithoutPmiId) {
    ListeningLauncher launcher{std::string(kHandshake)};
    auto client = Client::from_environment(
        environment_of({{"PMI_PORT", launcher.port()}, {"PMI_RANK", "1"}, {"PMI_SIZE", "3"}}));
    ASSERT_TRUE(client) << client.error().str();
    ASSERT_TRUE(client->has_value());
    EXPECT_EQ((*client)->rank(), 1);
    EXPECT_EQ((*client)->size(), 3);
    client->reset();
    EXPECT_EQ(launcher.requests(), kHandshakeRequests);
}

TEST(PmiClient, BadInitack) {
    const std::pair<std::string, std::string_view> replies[] = {
        {"", "pmi: the launcher closed the connection while waiting for initack"},
        {"cmd=initack\ncmd=set size=4\n",
         "pmi: the launcher closed the connection while waiting for set"},
        {"cmd=initack\ncmd=set size=4\ncmd=set rank=x\ncmd=set debug=0\n",
         "pmi: reply to initack with a bad rank in \"cmd=set rank=x\""},
        {"cmd=initack\ncmd=set size=4\ncmd=set debug=0\ncmd=set debug=0\n",
         "pmi: reply to initack without rank"},
        {"cmd=initack\ncmd=set size=4\ncmd=set rank=4\ncmd=set debug=0\n",
         "pmi: initack gave rank 4 of a job of 4"},
        {"cmd=init\n", "pmi: expected cmd=initack in reply to initack, got \"cmd=init\""},
    };
    for (const auto& [script, error] : replies) {
        ListeningLauncher launcher(script);
        const auto client = Client::from_environment(
            environment_of({{"PMI_PORT", launcher.port()}, {"PMI_ID", "3"}}));
        ASSERT_FALSE(client) << script;
        EXPECT_EQ(client.error().str(), error) << script;
    }
}

// ---------------------------------------------------------------------------
// PMI-2, against a scripted launcher that answers as Slurm's mpi/pmi2 plugin
// does (22.05): a PMI-1 response_to_init, then commands of a 6-byte length
// (digits padded with spaces) and `key=value;` pairs. The client's requests
// are compared byte for byte.

constexpr std::string_view kPmi2Handshake =
    "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"
    "114   cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;size=3;appnum=-1;"
    "debugged=FALSE;pmiverbose=FALSE;";
constexpr std::string_view kPmi2HandshakeRequests =
    "cmd=init pmi_version=2 pmi_subversion=0\n"
    "51    cmd=fullinit;pmijobid=7.0;pmirank=1;threaded=FALSE;";

Result<Client> pmi2_client(const ScriptedLauncher& launcher) {
    return Client::connect_fd_pmi2(launcher.client_fd(), "7.0", 1);
}

TEST(PmiClient2, HandshakeAsSlurmAnswersIt) {
    ScriptedLauncher launcher(kPmi2Handshake);
    auto client = pmi2_client(launcher);
    ASSERT_TRUE(client) << client.error().str();
    EXPECT_EQ(launcher.requests(), kPmi2HandshakeRequests);
    EXPECT_EQ(client->wire(), Wire::kPmi2);
    EXPECT_EQ(client->rank(), 1);
    EXPECT_EQ(client->size(), 3);
    EXPECT_EQ(client->appnum(), -1);
    EXPECT_EQ(client->kvs_name(), "7.0");
    EXPECT_EQ(client->key_max(), 64u);
    EXPECT_EQ(client->value_max(), 1024u);
}

TEST(PmiClient2, RequestsAndRepliesAfterTheHandshake) {
    ScriptedLauncher launcher(std::string(kPmi2Handshake) +
                              "26    cmd=kvs-put-response;rc=0;"
                              "28    cmd=kvs-fence-response;rc=0;"
                              "69    cmd=kvs-get-response;rc=0;found=TRUE;value=tcp://127.0.0.1:"
                              "7000,6162;"
                              // A doubled ';' is one ';', and a value may be empty.
                              "52    cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b=c;;;"
                              "44    cmd=kvs-get-response;rc=0;found=TRUE;value=;"
                              // hydra's length, right-aligned.
                              "    27cmd=finalize-response;rc=0;");
    auto client = pmi2_client(launcher);
    ASSERT_TRUE(client) << client.error().str();
    EXPECT_TRUE(client->put("gantry.broker.1", "tcp://127.0.0.1:7001,6162"));
    EXPECT_TRUE(client->barrier());
    EXPECT_EQ(client->get("gantry.broker.0").value(), "tcp://127.0.0.1:7000,6162");
    EXPECT_EQ(client->get("semicolons").value(), "a;b=c;");
    EXPECT_EQ(client->get("empty").value(), "");
    EXPECT_TRUE(client->finalize());
    EXPECT_EQ(launcher.requests(),
              std::string(kPmi2HandshakeRequests) +
                  "64    cmd=kvs-put;key=gantry.broker.1;value=tcp://127.0.0.1:7001,6162;"
                  "14    cmd=kvs-fence;"
                  "51    cmd=kvs-get;jobid=7.0;srcid=-1;key=gantry.broker.0;"
                  "46    cmd=kvs-get;jobid=7.0;srcid=-1;key=semicolons;"
                  "41    cmd=kvs-get;jobid=7.0;srcid=-1;key=empty;"
                  "13    cmd=finalize;");
    EXPECT_EQ(outcome(client->barrier()), "pmi: kvs-fence after finalize");
    EXPECT_EQ(outcome(client->put("k", "v")), "pmi: kvs-put after finalize");
    EXPECT_EQ(outcome(client->get("k")), "pmi: kvs-get after finalize");
}

TEST(PmiClient2, NotFoundIsItsOwnKind) {
    ScriptedLauncher launcher(std::string(kPmi2Handshake) +
                              "38    cmd=kvs-get-response;rc=0;found=FALSE;");
    auto client = pmi2_client(launcher);
    ASSERT_TRUE(client) << client.error().str();
    const auto missing = client->get("gantry.broker.2");
    ASSERT_FALSE(missing);
    EXPECT_TRUE(missing.error().is_not_found());
    EXPECT_EQ(missing.error().str(), "pmi: kvs-get: key \"gantry.broker.2\" not found");
}

struct Pmi2HandshakeCase {
    std::string_view replies;
    std::string_view error;
};

const Pmi2HandshakeCase kBadPmi2Handshakes[] = {
    {"", "pmi: the launcher closed the connection while waiting for response_to_init"},
    // gantry's own server, which serves PMI-1 only.
    {"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n",
     "pmi: init refused by the launcher: rc=-1"},
    {"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n",
     "pmi: the launcher closed the connection while waiting for fullinit-response"},
    {"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n114   cmd=fullinit-response;",
     "pmi: the launcher closed the connection while waiting for fullinit-response"},
    // A PMI-1 line where a PMI-2 command belongs.
    {"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\ncmd=fullinit-response rc=0\n",
     "pmi: unreadable reply to fullinit: a length that is not 6 bytes of digits padded with "
     "spaces in \"cmd=fu\""},
    {"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"
     "45    cmd=fullinit-response;rc=3;errmsg=no pmirank;",
     "pmi: fullinit refused by the launcher: rc=3 errmsg=no pmirank"},
    {"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"
     "43    cmd=fullinit-response;rc=0;rank=1;appnum=0;",
     "pmi: reply to fullinit without a numeric size= in \"cmd=fullinit-response;rc=0;rank=1;"
     "appnum=0;\""},
    {"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"
     "50    cmd=fullinit-response;rc=0;rank=3;size=3;appnum=0;",
     "pmi: fullinit gave rank 3 of a job of 3"},
    {"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"
     "49    cmd=kvs-put-response;rc=0;rank=1;size=3;appnum=0;",
     "pmi: expected cmd=fullinit-response in reply to fullinit, got "
     "\"cmd=kvs-put-response;rc=0;rank=1;size=3;appnum=0;\""},
};

TEST(PmiClient2, BadHandshakesAreOneLineErrors) {
    for (const auto& c : kBadPmi2Handshakes) {
        ScriptedLauncher launcher(c.replies);
        const auto client = pmi2_client(launcher);
        ASSERT_FALSE(client) << c.replies;
        EXPECT_EQ(client.error().str(), c.error) << c.replies;
    }
}

const std::string kLongValueReply =
    "1069  cmd=kvs-get-response;rc=0;found=TRUE;value=" + std::string(1025, 'v') + ";";
const std::string kLongValueError =
    "pmi: unreadable reply to kvs-get: the value of \"value\" is longer than 1024 bytes at "
    "offset 37 in \"cmd=kvs-get-response;rc=0;found=TRUE;value=" +
    std::string(37, 'v') + "\"...";

const RequestCase kBadPmi2Replies[] = {
    {"fence, hung up", [](Client& c) { return outcome(c.barrier()); }, "",
     "pmi: the launcher closed the connection while waiting for kvs-fence-response"},
    {"fence, half a length", [](Client& c) { return outcome(c.barrier()); }, "28 ",
     "pmi: the launcher closed the connection while waiting for kvs-fence-response"},
    {"fence, half a command", [](Client& c) { return outcome(c.barrier()); },
     "28    cmd=kvs-fence-resp",
     "pmi: the launcher closed the connection while waiting for kvs-fence-response"},
    {"fence, refused", [](Client& c) { return outcome(c.barrier()); },
     "70    cmd=kvs-fence-response;rc=-1;errmsg=mpi/pmi2: failed to send temp kvs;",
     "pmi: kvs-fence refused by the launcher: rc=-1 errmsg=mpi/pmi2: failed to send temp kvs"},
    {"fence, no rc", [](Client& c) { return outcome(c.barrier()); },
     "23    cmd=kvs-fence-response;",
     "pmi: reply to kvs-fence without a numeric rc= in \"cmd=kvs-fence-response;\""},
    {"fence, rc not a number", [](Client& c) { return outcome(c.barrier()); },
     "28    cmd=kvs-fence-response;rc=x;",
     "pmi: reply to kvs-fence without a numeric rc= in \"cmd=kvs-fence-response;rc=x;\""},
    {"fence, rc not first", [](Client& c) { return outcome(c.barrier()); },
     "28    rc=0;cmd=kvs-fence-response;",
     "pmi: unreadable reply to kvs-fence: a command that does not start with cmd= at offset 0 "
     "in \"rc=0;cmd=kvs-fence-response;\""},
    {"fence, no last ';'", [](Client& c) { return outcome(c.barrier()); },
     "27    cmd=kvs-fence-response;rc=0",
     "pmi: unreadable reply to kvs-fence: a value without its ';' at offset 23 in "
     "\"cmd=kvs-fence-response;rc=0\""},
    {"fence, a pair without '='", [](Client& c) { return outcome(c.barrier()); },
     "26    cmd=kvs-fence-response;rc;",
     "pmi: unreadable reply to kvs-fence: a pair without '=' at offset 23 in "
     "\"cmd=kvs-fence-response;rc;\""},
    {"fence, '=' without a key", [](Client& c) { return outcome(c.barrier()); },
     "26    cmd=kvs-fence-response;=0;",
     "pmi: unreadable reply to kvs-fence: '=' without a key at offset 23 in "
     "\"cmd=kvs-fence-response;=0;\""},
    {"put, another reply", [](Client& c) { return outcome(c.put("k", "v")); },
     "28    cmd=kvs-fence-response;rc=0;",
     "pmi: expected cmd=kvs-put-response in reply to kvs-put, got "
     "\"cmd=kvs-fence-response;rc=0;\""},
    {"get, letters in the length", [](Client& c) { return outcome(c.get("k")); },
     "2a    cmd=kvs-get-response;rc=0;found=FALSE;",
     "pmi: unreadable reply to kvs-get: a length that is not 6 bytes of digits padded with "
     "spaces in \"2a    \""},
    {"get, spaces inside the length", [](Client& c) { return outcome(c.get("k")); },
     "3 8   cmd=kvs-get-response;rc=0;found=FALSE;",
     "pmi: unreadable reply to kvs-get: a length that is not 6 bytes of digits padded with "
     "spaces in \"3 8   \""},
    {"get, no digits in the length", [](Client& c) { return outcome(c.get("k")); },
     "      cmd=kvs-get-response;rc=0;found=FALSE;",
     "pmi: unreadable reply to kvs-get: a length that is not 6 bytes of digits padded with "
     "spaces in \"      \""},
    {"get, a length of 0", [](Client& c) { return outcome(c.get("k")); }, "0     ",
     "pmi: unreadable reply to kvs-get: a length of 0 bytes (1 to 65536) in \"0     \""},
    {"get, a length too long", [](Client& c) { return outcome(c.get("k")); }, "999999",
     "pmi: unreadable reply to kvs-get: a length of 999999 bytes (1 to 65536) in \"999999\""},
    {"get, no found", [](Client& c) { return outcome(c.get("k")); },
     "26    cmd=kvs-get-response;rc=0;",
     "pmi: reply to kvs-get without found=TRUE or found=FALSE in "
     "\"cmd=kvs-get-response;rc=0;\""},
    {"get, found but no value", [](Client& c) { return outcome(c.get("k")); },
     "37    cmd=kvs-get-response;rc=0;found=TRUE;",
     "pmi: reply to kvs-get without value= in \"cmd=kvs-get-response;rc=0;found=TRUE;\""},
    {"get, a value too long", [](Client& c) { return outcome(c.get("k")); }, kLongValueReply,
     kLongValueError},
    {"finalize, refused", [](Client& c) { return outcome(c.finalize()); },
     "27    cmd=finalize-response;rc=1;", "pmi: finalize refused by the launcher: rc=1"},
};

TEST(PmiClient2, BadRepliesAreOneLineErrors) {
    for (const auto& c : kBadPmi2Replies) {
        ScriptedLauncher launcher(std::string(kPmi2Handshake) + std::string(c.reply));
        auto client = pmi2_client(launcher);
        ASSERT_TRUE(client) << c.name << ": " << client.error().str();
        EXPECT_EQ(c.request(*client), c.error) << c.name;
    }
}

TEST(PmiClient2, ALauncherGoneBeforeTheRequestIsAnError) {
    ScriptedLauncher launcher(kPmi2Handshake);
    auto client = pmi2_client(launcher);
    ASSERT_TRUE(client) << client.error().str();
    launcher.hang_up();
    EXPECT_EQ(outcome(client->barrier()),
              "pmi: the launcher closed the connection before kvs-fence was sent");
}

const RefusedCase kRefusedPmi2Puts[] = {
    {"", "v", "pmi: kvs-put: an empty key"},
    {std::string(65, 'k'), "v",
     "pmi: kvs-put: key \"" + std::string(65, 'k') + "\" is longer than the launcher's 64 bytes"},
    {"a=b", "v", "pmi: kvs-put: key \"a=b\" holds '='"},
    {"a;b", "v", "pmi: kvs-put: key \"a;b\" holds ';'"},
    {"a\tb", "v", "pmi: kvs-put: key \"a\\tb\" holds a control byte"},
    {"k", std::string(1025, 'v'),
     "pmi: kvs-put: the value of \"k\" is 1025 bytes, longer than the launcher's 1024"},
    // Slurm's server cuts a value at its first ';', doubled or not.
    {"k", "a;b", "pmi: kvs-put: the value of \"k\" holds ';': \"a;b\""},
    {"k", "line\n", "pmi: kvs-put: the value of \"k\" holds a control byte: \"line\\n\""},
};

TEST(PmiClient2, PutsThatCannotGoOnTheWireAreRefused) {
    ScriptedLauncher launcher(std::string(kPmi2Handshake) +
                              "26    cmd=kvs-put-response;rc=0;"
                              "26    cmd=kvs-put-response;rc=0;");
    auto client = pmi2_client(launcher);
    ASSERT_TRUE(client) << client.error().str();
    (void)launcher.requests();
    for (const auto& c : kRefusedPmi2Puts)
        EXPECT_EQ(outcome(client->put(c.key, c.value)), c.error) << c.key;
    EXPECT_EQ(outcome(client->get("a;b")), "pmi: kvs-get: key \"a;b\" holds ';'");
    // Nothing was sent.
    EXPECT_EQ(launcher.requests(), "");
    // What PMI-1 refuses and PMI-2 carries: a space; the longest value.
    EXPECT_EQ(outcome(client->put("k", "a b")), "ok");
    EXPECT_EQ(outcome(client->put("k", std::string(1024, 'v'))), "ok");
    EXPECT_EQ(launcher.requests(),
              "28    cmd=kvs-put;key=k;value=a b;1049  cmd=kvs-put;key=k;value=" +
                  std::string(1024, 'v') + ";");
}

TEST(PmiClient2, AbortEndsTheWholeJob) {
    ScriptedLauncher launcher(kPmi2Handshake);
    auto client = pmi2_client(launcher);
    ASSERT_TRUE(client) << client.error().str();
    (void)launcher.requests();
    EXPECT_TRUE(client->abort(7, "broker 3 failed; no\troute"));
    EXPECT_TRUE(client->abort(1, ""));
    EXPECT_EQ(launcher.requests(),
              "53    cmd=abort;isworld=TRUE;msg=broker 3 failed_ no_route;"
              "28    cmd=abort;isworld=TRUE;msg=;");
}

TEST(PmiClient2, GantrysServerRefusesIt) {
    ServedJob job(1);
    const auto client = Client::connect_fd_pmi2(job.client_fd(0), "7.0", 0);
    ASSERT_FALSE(client);
    EXPECT_EQ(client.error().str(), "pmi: init refused by the launcher: rc=-1");
}

TEST(PmiClient2, FromPmiFdAndPmiJobid) {
    ScriptedLauncher launcher(kPmi2Handshake);
    const int fd = launcher.client_fd();
    ::fcntl(fd, F_SETFD, 0);  // as inherited across exec
    auto client = Client::from_environment(environment_of({{"PMI_FD", std::to_string(fd)},
                                                           {"PMI_JOBID", "7.0"},
                                                           {"PMI_RANK", "1"},
                                                           {"PMI_SIZE", "3"}}));
    ASSERT_TRUE(client) << client.error().str();
    ASSERT_TRUE(client->has_value());
    EXPECT_EQ((*client)->wire(), Wire::kPmi2);
    EXPECT_EQ((*client)->rank(), 1);
    EXPECT_EQ((*client)->size(), 3);
    EXPECT_EQ(::fcntl(fd, F_GETFD), FD_CLOEXEC);
    EXPECT_EQ(launcher.requests(), kPmi2HandshakeRequests);
}

TEST(PmiClient2, BadJobIds) {
    const int spare = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const std::string open_fd = std::to_string(spare);
    const EnvironmentCase cases[] = {
        {{{"PMI_FD", open_fd}, {"PMI_JOBID", ""}}, "pmi: PMI_JOBID is empty"},
        {{{"PMI_FD", open_fd}, {"PMI_JOBID", "7;0"}}, "pmi: PMI_JOBID=\"7;0\" is not a job id"},
        {{{"PMI_FD", open_fd}, {"PMI_JOBID", "7\n"}}, "pmi: PMI_JOBID=\"7\\n\" is not a job id"},
    };
    for (const auto& c : cases) {
        const auto client = Client::from_environment(environment_of(c.variables));
        ASSERT_FALSE(client) << c.error;
        EXPECT_EQ(client.error().str(), c.error);
    }
    EXPECT_EQ(::fcntl(spare, F_GETFD), FD_CLOEXEC);
    ::close(spare);
    EXPECT_EQ(Client::connect_fd_pmi2(-1, "7.0", 0).error().str(),
              "pmi: connect_fd_pmi2: -1 is not a file descriptor");
}

// ---------------------------------------------------------------------------
// Under real launchers: pmi_client_probe's line from each rank.

const std::string kProbe = GANTRY_PMI_CLIENT_PROBE;

Lines sorted(std::string text) {
    Lines lines = test::lines_of(text);
    std::sort(lines.begin(), lines.end());
    return lines;
}

// Each rank's line, saying which wire its client chose.
Lines three_ranks(std::string_view wire) {
    const std::string over = " of 3 over " + std::string(wire) + ": got ";
    return {"rank 0" + over + "value-1 value-2", "rank 1" + over + "value-0 value-2",
            "rank 2" + over + "value-0 value-1"};
}

TEST(PmiClientLaunched, UnderGantryRun) {
    const auto result = test::run_program(
        {"timeout", "60", test::gantry_binary(), "run", "--oversubscribe", "-n", "3", kProbe});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted(result.out), three_ranks("PMI-1"));
    EXPECT_EQ(result.err, "");
}

// gantry run inside a Slurm step: the step's PMI_JOBID, which says PMI-2,
// does not reach the tasks of gantry's PMI-1 server.
TEST(PmiClientLaunched, UnderGantryRunWithAnInheritedPmiJobid) {
    const auto result =
        test::run_program({"timeout", "60", "env", "PMI_JOBID=7.0", test::gantry_binary(), "run",
                           "--oversubscribe", "-n", "3", kProbe});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted(result.out), three_ranks("PMI-1"));
    EXPECT_EQ(result.err, "");
}

TEST(PmiClientLaunched, UnderHydraWithASocketPerTask) {
    // The fork launcher and the one host "localhost": every process and
    // every connection stays on this machine's loopback.
    const auto result = test::run_program({"timeout", "60", "mpiexec.hydra", "-launcher", "fork",
                                           "-hosts", "localhost", "-n", "3", kProbe});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted(result.out), three_ranks("PMI-1"));
    EXPECT_EQ(result.err, "");
}

TEST(PmiClientLaunched, UnderHydraWithPmiPort) {
    const auto result = test::run_program({"timeout", "60", "mpiexec.hydra", "-launcher", "fork",
                                           "-hosts", "localhost", "-pmi-port", "-n", "3", kProbe});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted(result.out), three_ranks("PMI-1"));
    EXPECT_EQ(result.err, "");
}

// hydra inside a Slurm step passes the step's PMI_JOBID on to its tasks,
// whose client then asks hydra for PMI-2, which hydra serves too.
TEST(PmiClientLaunched, UnderHydraWithAnInheritedPmiJobid) {
    const auto result =
        test::run_program({"timeout", "60", "env", "PMI_JOBID=7.0", "mpiexec.hydra", "-launcher",
                           "fork", "-hosts", "localhost", "-n", "3", kProbe});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted(result.out), three_ranks("PMI-2"));
    EXPECT_EQ(result.err, "");
}

// Slurm's mpi/pmi2 plugin, on a one-node cluster made for the test
// (tests/cli/scripts/slurm_cluster.sh; skipped where it cannot be made).
TEST(PmiClientLaunched, UnderSrunWithPmi2) {
    const auto result = test::run_program({"timeout", "120", "bash",
                                           std::string(GANTRY_TEST_SCRIPTS) + "/slurm_cluster.sh",
                                           "srun", "--mpi=pmi2", "-n", "3", "-O", kProbe});
    if (result.exit_code == 77)
        GTEST_SKIP() << result.out;
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(sorted(result.out), three_ranks("PMI-2"));
    EXPECT_EQ(result.err, "");
}

TEST(PmiClientLaunched, WithoutALauncher) {
    const auto result = test::run_program({"env", "-u", "PMI_FD", "-u", "PMI_PORT", kProbe});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "pmi_client_probe: not launched by PMI\n");
}

}  // namespace
}  // namespace gantry::pmi
