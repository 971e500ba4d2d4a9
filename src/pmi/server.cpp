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

Server::Server(JobInfo job) : job_(std::move(job)), clients_(job_.size) {}

Effects Server::receive(std::uint32_t rank, std::string_view bytes) {
    Effects effects;
    if (rank >= clients_.size()) {
        effects.protocol_error =
            Error("pmi", "rank " + std::to_string(rank) + " is not in this job of " +
                             counted(clients_.size(), "task"))
                .str();
        return effects;
    }
    Client& client = clients_[rank];
    while (!client.closed && !bytes.empty()) {
        const std::size_t newline = bytes.find('\n');
        const std::size_t length = std::min(newline, bytes.size());
        // A line may hold kLineMax - 1 bytes and its newline: refused as soon
        // as it is longer, so that a partial line never grows without bound.
        if (client.partial_line.size() + length > kLineMax - 1) {
            const std::string line = client.partial_line + std::string(bytes.substr(0, kLineMax));
            effects.protocol_error =
                Error::at("pmi", "a line longer than 1024 bytes", line, kLineMax - 1).str();
            close(rank);
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
        if (Status status = handle_line(rank, line, effects); !status) {
            effects.protocol_error = status.error().str();
            close(rank);
        }
    }
    return effects;
}

void Server::disconnected(std::uint32_t rank) {
    if (rank < clients_.size())
        close(rank);
}

bool Server::initialized(std::uint32_t rank) const {
    return rank < clients_.size() && clients_[rank].initialized;
}

bool Server::finalized(std::uint32_t rank) const {
    return rank < clients_.size() && clients_[rank].finalized;
}

void Server::close(std::uint32_t rank) {
    Client& client = clients_[rank];
    client.closed = true;
    client.partial_line = std::string();
    client.in_spawn = false;
    // A task gone from the barrier can never leave it: the barrier stays
    // incomplete and nobody is answered, as the job is failing anyway.
    if (client.in_barrier) {
        client.in_barrier = false;
        --in_barrier_;
    }
}

Status Server::handle_line(std::uint32_t rank, std::string_view line, Effects& effects) {
    if (clients_[rank].in_spawn)
        return handle_spawn_line(rank, line, effects);
    auto request = Request::parse(line);
    if (!request)
        return request.error();
    if (request->tokens().empty())
        return Error::in("pmi", "an empty request", line);
    const Token& first = request->tokens().front();
    if (first.key == "mcmd" && first.value == "spawn") {
        clients_[rank].in_spawn = true;
        clients_[rank].spawn_total.reset();
        clients_[rank].spawn_so_far.reset();
        return {};
    }
    if (first.key != "cmd")
        return Error::at("pmi", "a request that does not start with cmd=", line, first.offset);
    return handle_request(rank, *request, effects);
}

// Spawn is refused, but its block is read to its end so that the client
// gets the one reply it waits for after its last block (MPICH numbers the
// blocks 1..totspawns in spawnssofar). Argument lines may hold spaces, so a
// block line is only split at its first '='.
Status Server::handle_spawn_line(std::uint32_t rank, std::string_view line, Effects& effects) {
    Client& client = clients_[rank];
    if (line == "endcmd") {
        client.in_spawn = false;
        const bool last = !client.spawn_total || !client.spawn_so_far ||
                          *client.spawn_so_far >= *client.spawn_total;
        if (last)
            effects.replies.push_back(
                reply_line(rank, "cmd=spawn_result rc=-1 msg=spawn_not_supported"));
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

Status Server::handle_request(std::uint32_t rank, const Request& request, Effects& effects) {
    const Token& first = request.tokens().front();
    const std::string_view command = first.value;
    const auto answer = [&](std::string line) {
        effects.replies.push_back(reply_line(rank, std::move(line)));
        return Status{};
    };
    if (command == "init")
        return init(rank, request, effects);
    if (command == "get_maxes")
        return answer(maxes_line());
    if (command == "get_appnum") {
        const auto& appnums = job_.appnum_of_rank;
        return answer("cmd=appnum appnum=" +
                      std::to_string(rank < appnums.size() ? appnums[rank] : 0));
    }
    if (command == "get_universe_size")
        return answer("cmd=universe_size size=" + std::to_string(job_.universe_size));
    if (command == "get_my_kvsname")
        return answer("cmd=my_kvsname kvsname=" + job_.kvsname);
    if (command == "put")
        return put(rank, request, effects);
    if (command == "get")
        return get(rank, request, effects);
    if (command == "barrier_in")
        return barrier_in(rank, request, effects);
    if (command == "finalize") {
        clients_[rank].finalized = true;
        return answer("cmd=finalize_ack");
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
        return answer("cmd=publish_result rc=-1 " + name_service);
    if (command == "unpublish_name")
        return answer("cmd=unpublish_result rc=-1 " + name_service);
    if (command == "lookup_name")
        return answer("cmd=lookup_result rc=-1 " + name_service);
    return Error::at("pmi", "unknown command " + quote(command), request.line(),
                     first.offset + first.key.size() + 1);
}

// MPICH always sends 1.1; a 1.0 client speaks a subset of the same
// protocol, so both are served.
Status Server::init(std::uint32_t rank, const Request& request, Effects& effects) {
    const auto version = request.require("pmi_version");
    if (!version)
        return version.error();
    const auto subversion = request.require("pmi_subversion");
    if (!subversion)
        return subversion.error();
    clients_[rank].initialized = true;
    const auto sub = parse_int(*subversion);
    const bool supported = parse_int(*version) == 1 && sub && *sub >= 0 && *sub <= 1;
    effects.replies.push_back(
        reply_line(rank, std::string("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=") +
                             (supported ? "0" : "-1")));
    return {};
}

Status Server::put(std::uint32_t rank, const Request& request, Effects& effects) {
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
        effects.replies.push_back(
            reply_line(rank, "cmd=put_result rc=-1 msg=" + std::string(failure)));
        return {};
    }
    kvs_.insert_or_assign(std::string(*key), std::string(*value));
    effects.replies.push_back(reply_line(rank, "cmd=put_result rc=0 msg=success"));
    return {};
}

// Every put is already in the one KVS of the job, so a get is answered at
// once: found or not, never deferred.
Status Server::get(std::uint32_t rank, const Request& request, Effects& effects) {
    const auto kvsname = request.require("kvsname");
    if (!kvsname)
        return kvsname.error();
    const auto key = request.require("key");
    if (!key)
        return key.error();
    const auto reply = [&](std::string line) {
        effects.replies.push_back(reply_line(rank, std::move(line)));
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

Status Server::barrier_in(std::uint32_t rank, const Request& request, Effects& effects) {
    Client& client = clients_[rank];
    if (client.in_barrier)
        return Error::in("pmi", "a second barrier_in before barrier_out", request.line());
    client.in_barrier = true;
    if (++in_barrier_ < clients_.size())
        return {};
    for (std::uint32_t r = 0; r < clients_.size(); ++r) {
        clients_[r].in_barrier = false;
        effects.replies.push_back(reply_line(r, "cmd=barrier_out"));
    }
    in_barrier_ = 0;
    return {};
}

}  // namespace gantry::pmi
