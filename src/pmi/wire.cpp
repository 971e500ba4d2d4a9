#include "pmi/wire.h"

#include <charconv>

namespace gantry::pmi {

Result<Request> Request::parse(std::string_view line) {
    Request request;
    request.line_ = line;
    std::size_t pos = 0;
    while (true) {
        while (pos < line.size() && line[pos] == ' ')
            ++pos;
        if (pos == line.size())
            return request;
        const std::size_t start = pos;
        while (pos < line.size() && line[pos] != ' ' && line[pos] != '=')
            ++pos;
        if (pos == start)
            return Error::at("pmi", "'=' without a key", line, start);
        if (pos == line.size() || line[pos] == ' ')
            return Error::at("pmi", "a token without '='", line, start);
        const std::size_t value_start = ++pos;
        while (pos < line.size() && line[pos] != ' ')
            ++pos;
        request.tokens_.push_back({line.substr(start, value_start - 1 - start),
                                   line.substr(value_start, pos - value_start), start});
    }
}

std::optional<std::string_view> Request::find(std::string_view key) const {
    for (const auto& token : tokens_)
        if (token.key == key)
            return token.value;
    return std::nullopt;
}

Result<std::string_view> Request::require(std::string_view key) const {
    if (auto value = find(key))
        return *value;
    const std::string command = tokens_.empty() ? "" : std::string(tokens_.front().value);
    return Error::in("pmi", command + " without " + std::string(key) + "=", line_);
}

std::optional<int> parse_int(std::string_view text) {
    int n = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, n);
    if (text.empty() || ec != std::errc() || ptr != end)
        return std::nullopt;
    return n;
}

}  // namespace gantry::pmi
