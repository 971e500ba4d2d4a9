#include "util/error.h"

#include <cstdio>

namespace gantry {

Error Error::in(std::string domain, std::string message, std::string_view input) {
    Error e(std::move(domain), std::move(message));
    e.input_ = std::string(input);
    return e;
}

Error Error::at(std::string domain, std::string message, std::string_view input,
                std::size_t offset) {
    Error e = in(std::move(domain), std::move(message), input);
    e.offset_ = offset;
    return e;
}

std::string Error::str() const {
    std::string line = domain_.empty() ? message_ : domain_ + ": " + message_;
    if (offset_)
        line += " at offset " + std::to_string(*offset_);
    if (input_)
        line += " in " + quote(*input_);
    return line;
}

std::string quote(std::string_view text, std::size_t limit) {
    const bool cut = text.size() > limit;
    if (cut)
        text = text.substr(0, limit);
    std::string out = "\"";
    for (const unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    out += cut ? "\"..." : "\"";
    return out;
}

}  // namespace gantry
