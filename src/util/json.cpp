#include "util/json.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "util/text.h"

namespace gantry {

namespace {

// Bytes a JSON string holds as they are: printable ASCII but `"` and `\`.
// The rest is escaped, or UTF-8 to be checked.
constexpr std::array<bool, 256> kPlain = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 0x80; ++c)
        plain[c] = c != '"' && c != '\\';
    return plain;
}();

bool plain(char c) {
    return kPlain[static_cast<unsigned char>(c)];
}

// Where the run of plain bytes that starts at `pos` ends: sixteen bytes at
// a time (eight without SSE2) while none of them is a control byte, `"`,
// `\` or outside ASCII (a line of output is one run, base64 a run of a MiB
// or more), then byte by byte.
std::size_t plain_run_end(std::string_view text, std::size_t pos) {
#ifdef __SSE2__
    // A signed compare: the bytes outside ASCII are below 0x20 too.
    const __m128i space = _mm_set1_epi8(0x20);
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    while (pos + 16 <= text.size()) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + pos));
        const __m128i special = _mm_or_si128(
            _mm_cmplt_epi8(bytes, space),
            _mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)));
        if (const int mask = _mm_movemask_epi8(special); mask != 0)
            return pos + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
        pos += 16;
    }
#else
    constexpr std::uint64_t kOnes = 0x0101010101010101;
    constexpr std::uint64_t kHighs = 0x8080808080808080;
    // Non-zero when some byte of `word` is 0 (exact as a yes or no).
    const auto zero_byte = [](std::uint64_t word) { return (word - kOnes) & ~word & kHighs; };
    while (pos + 8 <= text.size()) {
        std::uint64_t word = 0;
        std::memcpy(&word, text.data() + pos, sizeof word);
        const std::uint64_t special = ((word - kOnes * 0x20) & ~word & kHighs) |  // below 0x20
                                      zero_byte(word ^ (kOnes * '"')) |
                                      zero_byte(word ^ (kOnes * '\\')) | (word & kHighs);
        if (special)
            break;
        pos += 8;
    }
#endif
    while (pos < text.size() && plain(text[pos]))
        ++pos;
    return pos;
}

// JSON as gantry's own messages hold it, read in one pass with strings
// copied run by run: output chunks are long strings, which nlohmann's
// lexer takes byte by byte. Gives up (nullopt) on whatever it does not take
// as surely as nlohmann: \u escapes of surrogates, numbers out of range,
// very deep nesting, and anything invalid (UTF-8 that is not among it).
class FastParser {
public:
    explicit FastParser(std::string_view text) : text_(text) {}

    std::optional<Json> document() {
        Json value;
        if (!parse_value(value, 0))
            return std::nullopt;
        skip_space();
        if (pos_ != text_.size())
            return std::nullopt;
        return value;
    }

private:
    static constexpr int kMaxDepth = 128;

    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                       text_[pos_] == '\r' || text_[pos_] == '\t'))
            ++pos_;
    }

    bool literal(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word)
            return false;
        pos_ += word.size();
        return true;
    }

    // Just after the opening bracket: whether `close` follows (taken).
    bool empty(char close) {
        skip_space();
        if (pos_ == text_.size() || text_[pos_] != close)
            return false;
        ++pos_;
        return true;
    }

    // After a member or an element: true at `close`, false after a comma
    // (either taken), nullopt at anything else.
    std::optional<bool> closes(char close) {
        skip_space();
        if (pos_ == text_.size())
            return std::nullopt;
        const char c = text_[pos_++];
        if (c == close)
            return true;
        if (c == ',')
            return false;
        return std::nullopt;
    }

    bool parse_value(Json& out, int depth) {
        skip_space();
        if (pos_ == text_.size() || depth > kMaxDepth)
            return false;
        switch (text_[pos_]) {
            case '{':
                return parse_object(out, depth);
            case '[':
                return parse_array(out, depth);
            case '"': {
                std::string text;
                if (!parse_string(text))
                    return false;
                out = std::move(text);
                return true;
            }
            case 't':
                out = true;
                return literal("true");
            case 'f':
                out = false;
                return literal("false");
            case 'n':
                out = nullptr;
                return literal("null");
            default:
                return parse_number(out);
        }
    }

    bool parse_object(Json& out, int depth) {
        ++pos_;  // {
        out = Json::object();
        if (empty('}'))
            return true;
        for (;;) {
            skip_space();
            std::string key;
            if (pos_ == text_.size() || text_[pos_] != '"' || !parse_string(key))
                return false;
            skip_space();
            if (pos_ == text_.size() || text_[pos_] != ':')
                return false;
            ++pos_;
            Json value;
            if (!parse_value(value, depth + 1))
                return false;
            out[std::move(key)] = std::move(value);  // a repeated key: the last one, as nlohmann
            const auto closed = closes('}');
            if (!closed || *closed)
                return closed.has_value();
        }
    }

    bool parse_array(Json& out, int depth) {
        ++pos_;  // [
        out = Json::array();
        if (empty(']'))
            return true;
        for (;;) {
            Json value;
            if (!parse_value(value, depth + 1))
                return false;
            out.push_back(std::move(value));
            const auto closed = closes(']');
            if (!closed || *closed)
                return closed.has_value();
        }
    }

    // At the opening quote.
    bool parse_string(std::string& out) {
        ++pos_;
        for (;;) {
            const std::size_t start = pos_;
            pos_ = plain_run_end(text_, pos_);
            out.append(text_.substr(start, pos_ - start));
            if (pos_ == text_.size())
                return false;
            if (static_cast<unsigned char>(text_[pos_]) >= 0x80) {
                const std::size_t length = utf8_sequence_length(text_, pos_);
                if (length == 0)
                    return false;
                out.append(text_.substr(pos_, length));
                pos_ += length;
                continue;
            }
            const char c = text_[pos_++];
            if (c == '"')
                return true;
            if (c != '\\' || pos_ == text_.size())
                return false;  // a control byte
            switch (text_[pos_++]) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u':
                    if (!parse_code_point(out))
                        return false;
                    break;
                default:
                    return false;
            }
        }
    }

    // After "\u": four hex digits, a code point outside the surrogates,
    // appended in UTF-8 (a surrogate pair is nlohmann's to judge).
    bool parse_code_point(std::string& out) {
        if (pos_ + 4 > text_.size())
            return false;
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = text_[pos_++];
            const int digit = c >= '0' && c <= '9'   ? c - '0'
                              : c >= 'a' && c <= 'f' ? c - 'a' + 10
                              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                     : -1;
            if (digit < 0)
                return false;
            code = code * 16 + static_cast<unsigned>(digit);
        }
        if (code >= 0xD800 && code <= 0xDFFF)
            return false;
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
        return true;
    }

    static bool digit(char c) { return c >= '0' && c <= '9'; }

    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?: an integer as nlohmann
    // keeps it (unsigned when not negative, else signed), else a double.
    bool parse_number(Json& out) {
        const std::size_t start = pos_;
        if (pos_ < text_.size() && text_[pos_] == '-')
            ++pos_;
        if (pos_ == text_.size() || !digit(text_[pos_]))
            return false;
        if (text_[pos_] == '0')
            ++pos_;
        else
            while (pos_ < text_.size() && digit(text_[pos_]))
                ++pos_;
        bool integer = true;
        if (pos_ < text_.size() && text_[pos_] == '.') {
            integer = false;
            ++pos_;
            if (pos_ == text_.size() || !digit(text_[pos_]))
                return false;
            while (pos_ < text_.size() && digit(text_[pos_]))
                ++pos_;
        }
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            integer = false;
            ++pos_;
            if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
                ++pos_;
            if (pos_ == text_.size() || !digit(text_[pos_]))
                return false;
            while (pos_ < text_.size() && digit(text_[pos_]))
                ++pos_;
        }
        const std::string_view token = text_.substr(start, pos_ - start);
        if (!integer)
            return number<double>(token, out);
        return token.front() == '-' ? number<std::int64_t>(token, out)
                                    : number<std::uint64_t>(token, out);
    }

    // The whole token as a Number; false when it does not fit.
    template <class Number>
    static bool number(std::string_view token, Json& out) {
        Number value{};
        const char* last = token.data() + token.size();
        const auto [end, error] = std::from_chars(token.data(), last, value);
        if (error != std::errc() || end != last)
            return false;
        if constexpr (std::is_floating_point_v<Number>)
            if (!std::isfinite(value))
                return false;
        out = value;
        return true;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

void append_compact(std::string& out, const Json& value);

// Appends `text` as a JSON string, escaped as nlohmann's dump escapes it;
// false, with nothing appended, where it is not UTF-8 (which nlohmann
// replaces).
bool append_escaped(std::string& out, std::string_view text) {
    static constexpr std::string_view kHex = "0123456789abcdef";
    const std::size_t mark = out.size();
    out += '"';
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t run = plain_run_end(text, pos);
        out.append(text.substr(pos, run - pos));
        pos = run;
        if (pos == text.size())
            break;
        const auto c = static_cast<unsigned char>(text[pos]);
        if (c >= 0x80) {
            const std::size_t length = utf8_sequence_length(text, pos);
            if (length == 0) {
                out.resize(mark);
                return false;
            }
            out.append(text.substr(pos, length));
            pos += length;
            continue;
        }
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                out += "\\u00";
                out += kHex[c >> 4];
                out += kHex[c & 0xF];
        }
        ++pos;
    }
    out += '"';
    return true;
}

void append_string(std::string& out, const std::string& text) {
    if (!append_escaped(out, text))
        out += detail::to_compact_nlohmann(Json(text));
}

void append_compact(std::string& out, const Json& value) {
    switch (value.type()) {
        case Json::value_t::object: {
            out += '{';
            bool first = true;
            for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
                if (!first)
                    out += ',';
                first = false;
                append_string(out, key);
                out += ':';
                append_compact(out, member);
            }
            out += '}';
            return;
        }
        case Json::value_t::array: {
            out += '[';
            bool first = true;
            for (const Json& element : value.get_ref<const Json::array_t&>()) {
                if (!first)
                    out += ',';
                first = false;
                append_compact(out, element);
            }
            out += ']';
            return;
        }
        case Json::value_t::string:
            append_string(out, value.get_ref<const std::string&>());
            return;
        default:
            out += detail::to_compact_nlohmann(value);
    }
}

}  // namespace

namespace detail {

std::optional<Json> parse_json_fast(std::string_view text) {
    return FastParser(text).document();
}

std::string to_compact_nlohmann(const Json& value) {
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace detail

Result<Json> parse_json(std::string_view domain, std::string_view text) {
    if (auto fast = detail::parse_json_fast(text))
        return std::move(*fast);
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        // nlohmann reports the 1-based position of the byte that failed.
        const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        return Error::at(std::string(domain), "invalid JSON", text, offset);
    } catch (const Json::out_of_range&) {
        // A number too large for a double (`1e999`); nlohmann gives no position.
        return Error::in(std::string(domain), "invalid JSON: a number is out of range", text);
    }
}

std::string to_compact(const Json& value) {
    std::string out;
    append_compact(out, value);
    return out;
}

std::string json_type_name(const Json& value) {
    return value.type_name();
}

}  // namespace gantry
