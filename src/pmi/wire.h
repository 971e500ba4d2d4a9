// The two wires of PMI. PMI-1: one request line split into its key=value
// tokens, the way MPICH's client splits its own lines (PMIU_parse_keyvals),
// so that both ends agree on what a line says. PMI-2: one length-prefixed
// command of `key=value;` pairs, as Slurm's mpi/pmi2 plugin and MPICH's
// PMI-2 client write and read them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gantry::pmi {

// The most bytes of a line, its newline included (MPICH's PMIU_MAXLINE).
inline constexpr std::size_t kLineMax = 1024;

struct Token {
    std::string_view key;
    std::string_view value;  // may be empty and may hold '='
    std::size_t offset = 0;  // of the key in the line
};

// A request line without its '\n'. The tokens point into the line given to
// parse(), which must outlive the Request.
class Request {
public:
    // Spaces separate tokens; a key runs to the first '=' and its value to
    // the next space. A token without '=' or with an empty key is an error.
    static Result<Request> parse(std::string_view line);

    std::string_view line() const { return line_; }
    const std::vector<Token>& tokens() const { return tokens_; }
    // The value of the first token named `key`, as MPICH's lookup does.
    std::optional<std::string_view> find(std::string_view key) const;
    // The value of `key`, or an error naming the command and the key.
    Result<std::string_view> require(std::string_view key) const;

private:
    std::string_view line_;
    std::vector<Token> tokens_;
};

// `text` as a whole decimal int ("-1", "7"), or nothing.
std::optional<int> parse_int(std::string_view text);

// ---------------------------------------------------------------------------
// PMI-2. A command is its length, in 6 bytes (decimal digits padded with
// spaces: left-aligned "27    " from Slurm and MPICH's client, right-aligned
// "    27" from hydra), then that many bytes of `key=value;` pairs, the
// first `cmd=<name>;`:
//
//     27    cmd=kvs-fence-response;rc=0;
//
// A key runs to the first '=', its value to the next ';' that is not
// doubled: ";;" in a value stands for one ';' (MPICH's rule; Slurm's server
// neither doubles nor undoubles, so a value holding ';' does not survive it).
// Both ends open with a PMI-1 line, `cmd=init pmi_version=2
// pmi_subversion=0`, answered by a PMI-1 `cmd=response_to_init` line.

// The bytes of the length, and the longest body MPICH's PMI-2 client reads
// (PMII_COMMANDLEN_SIZE, PMII_MAX_COMMAND_LEN).
inline constexpr std::size_t kPmi2LengthSize = 6;
inline constexpr std::size_t kPmi2CommandMax = 64 * 1024;
// The longest key and value MPICH's and Slurm's PMI-2 take (PMI2_MAX_KEYLEN,
// PMI2_MAX_VALLEN), a value's bytes counted before any ';' is doubled.
inline constexpr std::size_t kPmi2KeyMax = 64;
inline constexpr std::size_t kPmi2ValueMax = 1024;

struct Pair {
    std::string key;
    std::string value;
    bool operator==(const Pair&) const = default;
};

class Pmi2Command {
public:
    // `cmd=<name>`, without other pairs yet.
    explicit Pmi2Command(std::string_view name) { add("cmd", name); }
    // Appends a pair. The key should be 1 to 64 bytes without '=' or ';';
    // the value may hold any byte (';' is doubled on the wire).
    Pmi2Command& add(std::string_view key, std::string_view value);

    // A body (what follows the length): pairs as above, each ending in
    // ';', the first cmd=. Keys of 1 to 64 bytes, values of at most 1024.
    static Result<Pmi2Command> parse(std::string_view body);
    // The body's length, from the 6 bytes before it, either alignment: 1 to
    // kPmi2CommandMax. Written left-aligned.
    static Result<std::size_t> parse_length(std::string_view prefix);

    // cmd's value.
    std::string_view name() const { return pairs_.front().value; }
    // Every pair, cmd= first, in the order of the wire.
    const std::vector<Pair>& pairs() const { return pairs_; }
    // The value of the first pair named `key`, as MPICH's lookup does.
    std::optional<std::string_view> find(std::string_view key) const;
    // The pairs on the wire, without the length / with it (a body of at
    // most kPmi2CommandMax bytes, which the length can say).
    std::string body() const;
    std::string to_wire() const;

    bool operator==(const Pmi2Command&) const = default;

private:
    Pmi2Command() = default;
    std::vector<Pair> pairs_;
};

}  // namespace gantry::pmi
