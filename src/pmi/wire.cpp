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

Pmi2Command& Pmi2Command::add(std::string_view key, std::string_view value) {
    pairs_.push_back({std::string(key), std::string(value)});
    return *this;
}

Result<Pmi2Command> Pmi2Command::parse(std::string_view body) {
    if (body.empty())
        return Error("pmi", "an empty command");
    Pmi2Command command;
    std::size_t pos = 0;
    while (pos < body.size()) {
        const std::size_t start = pos;
        while (pos < body.size() && body[pos] != '=' && body[pos] != ';')
            ++pos;
        if (pos == body.size() || body[pos] == ';')
            return Error::at("pmi", "a pair without '='", body, start);
        if (pos == start)
            return Error::at("pmi", "'=' without a key", body, start);
        if (pos - start > kPmi2KeyMax)
            return Error::at("pmi", "a key longer than " + std::to_string(kPmi2KeyMax) + " bytes",
                             body, start);
        Pair pair{std::string(body.substr(start, pos - start)), ""};
        ++pos;
        // The value runs to the first ';' that is not doubled.
        while (true) {
            if (pos == body.size())
                return Error::at("pmi", "a value without its ';'", body, start);
            if (body[pos] != ';') {
                pair.value += body[pos++];
            } else if (pos + 1 < body.size() && body[pos + 1] == ';') {
                pair.value += ';';
                pos += 2;
            } else {
                ++pos;
                break;
            }
        }
        if (pair.value.size() > kPmi2ValueMax)
            return Error::at("pmi",
                             "the value of " + quote(pair.key) + " is longer than " +
                                 std::to_string(kPmi2ValueMax) + " bytes",
                             body, start);
        if (command.pairs_.empty() && pair.key != "cmd")
            return Error::at("pmi", "a command that does not start with cmd=", body, 0);
        command.pairs_.push_back(std::move(pair));
    }
    return command;
}

Result<std::size_t> Pmi2Command::parse_length(std::string_view prefix) {
    std::size_t first = 0;
    while (first < prefix.size() && prefix[first] == ' ')
        ++first;
    std::size_t end = first;
    while (end < prefix.size() && prefix[end] >= '0' && prefix[end] <= '9')
        ++end;
    std::size_t spaces = end;
    while (spaces < prefix.size() && prefix[spaces] == ' ')
        ++spaces;
    if (prefix.size() != kPmi2LengthSize || end == first || spaces != prefix.size())
        return Error::in("pmi", "a length that is not 6 bytes of digits padded with spaces",
                         prefix);
    std::size_t length = 0;
    for (std::size_t i = first; i < end; ++i)
        length = length * 10 + static_cast<std::size_t>(prefix[i] - '0');
    if (length == 0 || length > kPmi2CommandMax)
        return Error::in("pmi",
                         "a length of " + std::to_string(length) + " bytes (1 to " +
                             std::to_string(kPmi2CommandMax) + ")",
                         prefix);
    return length;
}

std::optional<std::string_view> Pmi2Command::find(std::string_view key) const {
    for (const auto& pair : pairs_)
        if (pair.key == key)
            return std::string_view(pair.value);
    return std::nullopt;
}

std::string Pmi2Command::body() const {
    std::string body;
    for (const auto& pair : pairs_) {
        body += pair.key;
        body += '=';
        for (const char c : pair.value)
            body += c == ';' ? std::string_view(";;") : std::string_view(&c, 1);
        body += ';';
    }
    return body;
}

std::string Pmi2Command::to_wire() const {
    const std::string text = body();
    std::string length = std::to_string(text.size());
    if (length.size() < kPmi2LengthSize)
        length.append(kPmi2LengthSize - length.size(), ' ');
    return length + text;
}

}  // namespace gantry::pmi
