// One PMI-1 request line split into its key=value tokens, the way MPICH's
// client splits its own lines (PMIU_parse_keyvals), so that both ends agree
// on what a line says.
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

}  // namespace gantry::pmi
