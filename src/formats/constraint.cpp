#include "formats/constraint.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/hostlist.h"
#include "formats/idset.h"
#include "formats/rset.h"

namespace gantry {

namespace {

constexpr std::string_view kDomain = "constraint";
constexpr std::size_t kMaxLength = 64 * 1024;
constexpr int kMaxDepth = 100;

struct Token {
    enum class Kind { kWord, kAnd, kOr, kNot, kNegate, kOpen, kClose, kEnd };
    Kind kind = Kind::kEnd;
    std::size_t offset = 0;
    std::string text;                  // a word's, quotes removed
    std::vector<std::size_t> source;   // where each byte of `text` is in the input
    std::size_t end = 0;               // where the word ends in the input
    std::optional<std::size_t> colon;  // where its operator ends, in `text`

    // The input offset of byte `i` of `text`; the word's end past its last.
    std::size_t offset_of(std::size_t i) const { return i < source.size() ? source[i] : end; }
};

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool ends_word(char c) {
    return is_blank(c) || c == '(' || c == ')' || c == '&' || c == '|';
}

// The RFC 31 operator a query's operator names, or "" when it names none.
std::string_view rfc31_key(std::string_view op) {
    if (op == "properties" || op == "property")
        return "properties";
    if (op == "hostlist" || op == "host" || op == "hosts")
        return "hostlist";
    if (op == "ranks" || op == "rank")
        return "ranks";
    return "";
}

class QueryParser {
public:
    explicit QueryParser(std::string_view text) : text_(text) {}

    Result<Json> parse() {
        if (text_.size() > kMaxLength)
            return Error(std::string(kDomain), "the query is longer than 64 KiB");
        if (auto next = advance(); !next)
            return next.error();
        if (token_.kind == Token::Kind::kEnd)
            return error("the query is empty", 0);
        auto expression = parse_or(0);
        if (!expression)
            return expression.error();
        if (token_.kind != Token::Kind::kEnd)
            return error(token_.kind == Token::Kind::kClose ? "')' without '('"
                                                            : "unexpected " + described(),
                         token_.offset);
        return expression;
    }

private:
    Error error(std::string message, std::size_t offset) const {
        return Error::at(std::string(kDomain), std::move(message), text_, offset);
    }

    std::string described() const {
        switch (token_.kind) {
            case Token::Kind::kWord:
                return quote(token_.text);
            case Token::Kind::kAnd:
                return "an 'and'";
            case Token::Kind::kOr:
                return "an 'or'";
            case Token::Kind::kNot:
                return "a 'not'";
            case Token::Kind::kNegate:
                return "'-'";
            case Token::Kind::kOpen:
                return "'('";
            case Token::Kind::kClose:
                return "')'";
            case Token::Kind::kEnd:
                return "the end of the query";
        }
        return "";
    }

    // Reads the next token into token_.
    Status advance() {
        while (pos_ < text_.size() && is_blank(text_[pos_]))
            ++pos_;
        token_ = Token{};
        token_.offset = pos_;
        if (pos_ == text_.size())
            return {};
        const char c = text_[pos_];
        if (c == '(' || c == ')') {
            token_.kind = c == '(' ? Token::Kind::kOpen : Token::Kind::kClose;
            ++pos_;
            return {};
        }
        if (c == '&' || c == '|') {
            token_.kind = c == '&' ? Token::Kind::kAnd : Token::Kind::kOr;
            pos_ += pos_ + 1 < text_.size() && text_[pos_ + 1] == c ? 2 : 1;
            return {};
        }
        if (c == '-') {
            token_.kind = Token::Kind::kNegate;
            ++pos_;
            return {};
        }
        return read_word();
    }

    Status read_word() {
        token_.kind = Token::Kind::kWord;
        bool quoted = false;
        while (pos_ < text_.size() && !ends_word(text_[pos_])) {
            const char c = text_[pos_];
            if (c == '\'' || c == '"') {
                const std::size_t close = text_.find(c, pos_ + 1);
                if (close == std::string_view::npos)
                    return error(std::string("unterminated ") + (c == '"' ? "\"" : "'"), pos_);
                for (std::size_t at = pos_ + 1; at < close; ++at) {
                    token_.text.push_back(text_[at]);
                    token_.source.push_back(at);
                }
                quoted = true;
                pos_ = close + 1;
                continue;
            }
            if (c == ':' && !token_.colon)
                token_.colon = token_.text.size();
            token_.text.push_back(c);
            token_.source.push_back(pos_);
            ++pos_;
        }
        token_.end = pos_;
        if (!quoted) {
            if (token_.text == "and")
                token_.kind = Token::Kind::kAnd;
            else if (token_.text == "or")
                token_.kind = Token::Kind::kOr;
            else if (token_.text == "not")
                token_.kind = Token::Kind::kNot;
        }
        return {};
    }

    bool starts_operand() const {
        return token_.kind == Token::Kind::kWord || token_.kind == Token::Kind::kNot ||
               token_.kind == Token::Kind::kNegate || token_.kind == Token::Kind::kOpen;
    }

    // `items` joined by `op`, or the one item alone.
    static Json joined(const char* op, std::vector<Json> items) {
        if (items.size() == 1)
            return std::move(items.front());
        return Json{{op, std::move(items)}};
    }

    Status too_deep(int depth) const {
        if (depth > kMaxDepth)
            return error("nested more than " + std::to_string(kMaxDepth) + " deep", token_.offset);
        return {};
    }

    Result<Json> parse_or(int depth) {
        std::vector<Json> items;
        while (true) {
            auto item = parse_and(depth);
            if (!item)
                return item.error();
            items.push_back(std::move(*item));
            if (token_.kind != Token::Kind::kOr)
                return joined("or", std::move(items));
            if (auto next = expect_operand("'or'"); !next)
                return next.error();
        }
    }

    Result<Json> parse_and(int depth) {
        std::vector<Json> items;
        while (true) {
            auto item = parse_unary(depth);
            if (!item)
                return item.error();
            items.push_back(std::move(*item));
            if (token_.kind == Token::Kind::kAnd) {
                if (auto next = expect_operand("'and'"); !next)
                    return next.error();
            } else if (!starts_operand()) {
                return joined("and", std::move(items));
            }
        }
    }

    // Moves past a binary or unary operator, which needs something after it.
    Status expect_operand(const std::string& after) {
        if (auto next = advance(); !next)
            return next;
        if (!starts_operand())
            return error("expected a term after " + after + ", found " + described(),
                         token_.offset);
        return {};
    }

    Result<Json> parse_unary(int depth) {
        if (auto deep = too_deep(depth); !deep)
            return deep.error();
        switch (token_.kind) {
            case Token::Kind::kNot: {
                if (auto next = expect_operand("'not'"); !next)
                    return next.error();
                auto operand = parse_unary(depth + 1);
                if (!operand)
                    return operand.error();
                return Json{{"not", Json::array({std::move(*operand)})}};
            }
            case Token::Kind::kNegate: {
                const std::size_t minus = token_.offset;
                if (auto next = advance(); !next)
                    return next.error();
                if (token_.kind != Token::Kind::kWord)
                    return error("'-' negates a term, not " + described(), minus);
                auto term = parse_term();
                if (!term)
                    return term.error();
                return Json{{"not", Json::array({std::move(*term)})}};
            }
            case Token::Kind::kOpen: {
                const std::size_t open = token_.offset;
                if (auto next = expect_operand("'('"); !next)
                    return next.error();
                auto inner = parse_or(depth + 1);
                if (!inner)
                    return inner.error();
                if (token_.kind != Token::Kind::kClose)
                    return error("'(' without ')'", open);
                if (auto next = advance(); !next)
                    return next.error();
                return inner;
            }
            case Token::Kind::kWord:
                return parse_term();
            default:
                return error("expected a term, found " + described(), token_.offset);
        }
    }

    // The word in token_ as an RFC 31 operator and its operand.
    Result<Json> parse_term() {
        const Token word = std::move(token_);
        if (auto next = advance(); !next)
            return next.error();
        const std::size_t operand_start = word.colon ? *word.colon + 1 : 0;
        const std::string op = word.colon ? word.text.substr(0, *word.colon) : "properties";
        const std::string operand = word.text.substr(operand_start);
        if (word.colon && op.empty())
            return error("expected an operator before ':'", word.offset);
        const std::string_view key = rfc31_key(op);
        if (key.empty())
            return error("unknown operator " + quote(op) + " (properties, hostlist, ranks)",
                         word.offset);
        if (operand.empty())  // `host:`, or a bare `''`
            return error(word.colon ? quote(op + ":") + " needs an operand"
                                    : "properties: empty property name",
                         word.offset);
        // `inner`, an error at an offset of the operand, at its place in the input.
        const auto bad = [&](const Error& inner) {
            return error(op + ": " + inner.message(),
                         word.offset_of(operand_start + inner.offset().value_or(0)));
        };
        if (key == "properties") {
            Json names = Json::array();
            for (std::size_t at = 0; at <= operand.size();) {
                const std::size_t comma = std::min(operand.find(',', at), operand.size());
                std::string name = operand.substr(at, comma - at);
                const bool negated = name.starts_with('-') || name.starts_with('^');
                if (negated)
                    name.erase(0, 1);
                if (const auto problem = property_name_problem(name))
                    return bad(Error::at(std::string(kDomain), *problem, operand, at));
                names.push_back((negated ? "^" : "") + name);
                at = comma + 1;
            }
            return Json{{"properties", std::move(names)}};
        }
        if (key == "hostlist") {
            if (auto hosts = Hostlist::parse(operand); !hosts)
                return bad(hosts.error());
        } else if (auto ranks = IdSet::parse(operand); !ranks) {
            return bad(ranks.error());
        }
        return Json{{std::string(key), Json::array({operand})}};
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    Token token_;
};

}  // namespace

Result<Json> parse_constraint_query(std::string_view text) {
    return QueryParser(text).parse();
}

}  // namespace gantry
