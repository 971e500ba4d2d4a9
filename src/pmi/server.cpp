#include "pmi/server.h"

#include <algorithm>
#include <utility>

#include "pmi/wire.h"
#include "util/text.h"

namespace gantry::pmi {

namespace {

// A line to send, its newline added.
Reply reply_line(std::uint32_t rank, std::string line) {
    line += '\n';
    return {rank, std::move(line)};
}

std::string maxes_line() {
    return "cmd=maxes kvsname_max=" + std::to_string(kKvsNameMax) +
           " keylen_max=" + std::to_string(kKeyLenMax) + " vallen_max=" + std::to_string(kValueMax);
}

// Whether a server key's value can go on the wire as one token of a reply
// the client reads whole: the shell's keys are trusted, but a value that
// breaks the line would desynchronise every later reply.
bool fits_in_a_reply(std::string_view value) {
    return value.size() <= kValueMax && value.find_first_of(" \n") == std::string_view::npos;
}

using KeyValues = std::map<std::string, std::string, std::less<>>;

// A server key's value (when it fits in a reply), else a task's put.
std::optional<std::string_view> find_value(const KeyValues& server_keys, const KeyValues& puts,
                                           std::string_view key) {
    if (const auto it = server_keys.find(key); it != server_keys.end()) {
        if (fits_in_a_reply(it->second))
            return it->second;
        return std::nullopt;
    }
    if (const auto it = puts.find(key); it != puts.end())
        return it->second;
    return std::nullopt;
}

std::string get_failure(std::string_view reason) {
    return "cmd=get_result rc=-1 msg=" + std::string(reason) + " value=unknown";
}

}  // namespace

std::optional<std::string> process_mapping(const TaskMap& map) {
    // Each block laid down takes at least 8 bytes (",(0,1,1)") after
    // "(vector": a map of too many is refused before its text is built.
    std::uint64_t blocks = 0;
    for (const auto& block : map.blocks())
        blocks += block.repeat;
    if (map.empty() || 8 * (blocks + 1) > kValueMax)
        return std::nullopt;
    std::string mapping = map.to_pmi();
    if (mapping.size() > kValueMax)
        return std::nullopt;
    return mapping;
}

namespace {

// The ranks `job` says are local, those of the job only.
IdSet local_ranks_of(const JobInfo& job) {
    if (job.size == 0)
        return {};
    IdSet all = IdSet::range(0, job.size - 1);
    return job.local_ranks ? *job.local_ranks & all : all;
}

// Whether a merged put is one a task could have made: a key a get can ask
// for and a value that fits in a reply.
bool could_be_put(std::string_view key, std::string_view value) {
    return !key.empty() && key.size() <= kKeyLenMax &&
           key.find_first_of(" \n=") == std::string_view::npos && fits_in_a_reply(value);
}

}  // namespace

Server::Server(JobInfo job) : job_(std::move(job)), local_ranks_(local_ranks_of(job_)) {
    clients_.reserve(local_ranks_.count());
    for (const IdSet::Id rank : local_ranks_)
        clients_.emplace_back().rank = rank;
}

Server::Client* Server::client_of(std::uint32_t rank) {
    const auto index = local_ranks_.index_of(rank);
    return index ? &clients_[*index] : nullptr;
}

const Server::Client* Server::client_of(std::uint32_t rank) const {
    const auto index = local_ranks_.index_of(rank);
    return index ? &clients_[*index] : nullptr;
}

Effects Server::receive(std::uint32_t rank, std::string_view bytes) {
    Effects effects;
    if (rank >= job_.size) {
        effects.protocol_error =
            Error("pmi", "rank " + std::to_string(rank) + " is not in this job of " +
                             counted(job_.size, "task"))
                .str();
        return effects;
    }
    Client* found = client_of(rank);
    if (!found) {
        effects.protocol_error =
            Error("pmi", "rank " + std::to_string(rank) + " is not one of the " +
                             counted(clients_.size(), "task") + " on this node (of " +
                             std::to_string(job_.size) + " in the job)")
                .str();
        return effects;
    }
    Client& client = *found;
    while (!client.closed && !bytes.empty()) {
        const std::size_t newline = bytes.find('\n');
        const std::size_t length = std::min(newline, bytes.size());
        // A line may hold kLineMax - 1 bytes and its newline: refused as soon
        // as it is longer, so that a partial line never grows without bound.
        if (client.partial_line.size() + length > kLineMax - 1) {
            const std::string line = client.partial_line + std::string(bytes.substr(0, kLineMax));
            effects.protocol_error =
                Error::at("pmi", "a line longer than 1024 bytes", line, kLineMax - 1).str();
            close(client);
            break;
        }
        if (newline == std::string_view::npos) {
            client.partial_line.append(bytes);
            break;
        }
        const std::string line =
            std::move(client.partial_line) + std::string(bytes.substr(0, newline));
        client.partial_line.clear();
        bytes.remove_prefix(newline + 1);
        if (Status status = handle_line(client, line, effects); !status) {
            effects.protocol_error = status.error().str();
            close(client);
        }
    }
    return effects;
}

Result<Effects> Server::barrier_complete(const KeyValues& merged_puts) {
    if (!barrier_waiting_)
        return Error("pmi", "barrier_complete without a barrier waiting for its owner");
    for (const auto& [key, value] : merged_puts)
        if (!job_.server_keys.contains(key) && could_be_put(key, value))
            kvs_.insert_or_assign(key, value);
    Effects effects;
    for (Client& client : clients_) {
        if (client.in_barrier && !client.closed)
            effects.replies.push_back(reply_line(client.rank, "cmd=barrier_out"));
        client.in_barrier = false;
    }
    for (Client& client : clients_) {
        for (std::string& line : client.held)
            effects.replies.push_back({client.rank, std::move(line)});
        client.held.clear();
    }
    in_barrier_ = 0;
    barrier_waiting_ = false;
    return effects;
}

void Server::disconnected(std::uint32_t rank) {
    if (Client* client = client_of(rank))
        close(*client);
}

bool Server::initialized(std::uint32_t rank) const {
    const Client* client = client_of(rank);
    return client && client->initialized;
}

bool Server::finalized(std::uint32_t rank) const {
    const Client* client = client_of(rank);
    return client && client->finalized;
}

void Server::answer(Client& client, std::string line, Effects& effects) {
    line += '\n';
    if (client.in_barrier)
        client.held.push_back(std::move(line));
    else
        effects.replies.push_back({client.rank, std::move(line)});
}

void Server::close(Client& client) {
    client.closed = true;
    client.partial_line = std::string();
    client.in_spawn = false;
    client.held = {};
    // A task gone from a barrier not yet handed over can never leave it: the
    // barrier stays incomplete and nobody is answered, as the job is failing
    // anyway. One handed over completes without it.
    if (client.in_barrier && !barrier_waiting_) {
        client.in_barrier = false;
        --in_barrier_;
    }
}

Status Server::handle_line(Client& client, std::string_view line, Effects& effects) {
    if (client.in_spawn)
        return handle_spawn_line(client, line, effects);
    auto request = Request::parse(line);
    if (!request)
        return request.error();
    if (request->tokens().empty())
        return Error::in("pmi", "an empty request", line);
    const Token& first = request->tokens().front();
    if (first.key == "mcmd" && first.value == "spawn") {
        client.in_spawn = true;
        client.spawn_total.reset();
        client.spawn_so_far.reset();
        return {};
    }
    if (first.key != "cmd")
        return Error::at("pmi", "a request that does not start with cmd=", line, first.offset);
    return handle_request(client, *request, effects);
}

// Spawn is refused, but its block is read to its end so that the client
// gets the one reply it waits for after its last block (MPICH numbers the
// blocks 1..totspawns in spawnssofar). Argument lines may hold spaces, so a
// block line is only split at its first '='.
Status Server::handle_spawn_line(Client& client, std::string_view line, Effects& effects) {
    if (line == "endcmd") {
        client.in_spawn = false;
        const bool last = !client.spawn_total || !client.spawn_so_far ||
                          *client.spawn_so_far >= *client.spawn_total;
        if (last)
            answer(client, "cmd=spawn_result rc=-1 msg=spawn_not_supported", effects);
        return {};
    }
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos)
        return {};
    const std::string_view key = line.substr(0, equals);
    const std::string_view value = line.substr(equals + 1);
    if (key == "totspawns")
        client.spawn_total = parse_int(value);
    else if (key == "spawnssofar")
        client.spawn_so_far = parse_int(value);
    return {};
}

Status Server::handle_request(Client& client, const Request& request, Effects& effects) {
    const Token& first = request.tokens().front();
    const std::string_view command = first.value;
    const std::uint32_t rank = client.rank;
    const auto reply = [&](std::string line) {
        answer(client, std::move(line), effects);
        return Status{};
    };
    if (command == "init")
        return init(client, request, effects);
    if (command == "get_maxes")
        return reply(maxes_line());
    if (command == "get_appnum") {
        const auto& appnums = job_.appnum_of_rank;
        return reply("cmd=appnum appnum=" +
                     std::to_string(rank < appnums.size() ? appnums[rank] : 0));
    }
    if (command == "get_universe_size")
        return reply("cmd=universe_size size=" + std::to_string(job_.universe_size));
    if (command == "get_my_kvsname")
        return reply("cmd=my_kvsname kvsname=" + job_.kvsname);
    if (command == "put")
        return put(client, request, effects);
    if (command == "get")
        return get(client, request, effects);
    if (command == "barrier_in")
        return barrier_in(client, request, effects);
    if (command == "finalize") {
        client.finalized = true;
        return reply("cmd=finalize_ack");
    }
    if (command == "abort") {
        // The first abort decides the job's exit code.
        if (!effects.abort_exit_code) {
            const auto exitcode = request.find("exitcode");
            effects.abort_exit_code = exitcode ? parse_int(*exitcode).value_or(1) : 1;
            effects.abort_rank = rank;
        }
        return {};
    }
    // The reason is one word: MPICH prints it, and a value never holds a space.
    const std::string name_service = "msg=name_publishing_not_supported";
    if (command == "publish_name")
        return reply("cmd=publish_result rc=-1 " + name_service);
    if (command == "unpublish_name")
        return reply("cmd=unpublish_result rc=-1 " + name_service);
    if (command == "lookup_name")
        return reply("cmd=lookup_result rc=-1 " + name_service);
    return Error::at("pmi", "unknown command " + quote(command), request.line(),
                     first.offset + first.key.size() + 1);
}

// MPICH always sends 1.1; a 1.0 client speaks a subset of the same
// protocol, so both are served.
Status Server::init(Client& client, const Request& request, Effects& effects) {
    const auto version = request.require("pmi_version");
    if (!version)
        return version.error();
    const auto subversion = request.require("pmi_subversion");
    if (!subversion)
        return subversion.error();
    client.initialized = true;
    const auto sub = parse_int(*subversion);
    const bool supported = parse_int(*version) == 1 && sub && *sub >= 0 && *sub <= 1;
    answer(client,
           std::string("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=") +
               (supported ? "0" : "-1"),
           effects);
    return {};
}

Status Server::put(Client& client, const Request& request, Effects& effects) {
    const auto kvsname = request.require("kvsname");
    if (!kvsname)
        return kvsname.error();
    const auto key = request.require("key");
    if (!key)
        return key.error();
    const auto value = request.require("value");
    if (!value)
        return value.error();
    std::string_view failure;
    if (*kvsname != job_.kvsname)
        failure = "wrong_kvsname";
    else if (key->size() > kKeyLenMax)
        failure = "key_too_long";
    else if (value->size() > kValueMax)
        failure = "value_too_long";
    else if (job_.server_keys.contains(*key))
        failure = "key_is_reserved_by_the_server";
    if (!failure.empty()) {
        answer(client, "cmd=put_result rc=-1 msg=" + std::string(failure), effects);
        return {};
    }
    kvs_.insert_or_assign(std::string(*key), std::string(*value));
    unsent_puts_.insert_or_assign(std::string(*key), std::string(*value));
    answer(client, "cmd=put_result rc=0 msg=success", effects);
    return {};
}

// This node's puts are in the KVS at once, the other nodes' once a barrier
// completes: a get is answered at once, found or not, never deferred.
Status Server::get(Client& client, const Request& request, Effects& effects) {
    const auto kvsname = request.require("kvsname");
    if (!kvsname)
        return kvsname.error();
    const auto key = request.require("key");
    if (!key)
        return key.error();
    const auto reply = [&](std::string line) {
        answer(client, std::move(line), effects);
        return Status{};
    };
    if (*kvsname != job_.kvsname)
        return reply(get_failure("wrong_kvsname"));
    // The key goes back in the reason: a long one would make a long line.
    if (key->size() > kKeyLenMax)
        return reply(get_failure("key_too_long"));
    const auto value = find_value(job_.server_keys, kvs_, *key);
    if (!value)
        return reply(get_failure("key_" + std::string(*key) + "_not_found"));
    return reply("cmd=get_result rc=0 msg=success value=" + std::string(*value));
}

Status Server::barrier_in(Client& client, const Request& request, Effects& effects) {
    if (client.in_barrier)
        return Error::in("pmi", "a second barrier_in before barrier_out", request.line());
    client.in_barrier = true;
    if (++in_barrier_ < clients_.size())
        return {};
    barrier_waiting_ = true;
    effects.local_barrier = LocalBarrier{std::exchange(unsent_puts_, {})};
    return {};
}

}  // namespace gantry::pmi
