#include "cli/output_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace gantry::cli {

namespace {

bool is_align(char c) {
    return c == '<' || c == '>' || c == '^';
}

}  // namespace

Result<OutputFormat> OutputFormat::parse(std::string_view domain, std::string_view text,
                                         const std::map<std::string, std::string>& headings) {
    const std::string where = std::string(domain);
    const auto bad = [&](const std::string& message, std::size_t offset) {
        return Error::at(where, "--format: " + message, text, offset);
    };
    OutputFormat format;
    std::string literal;
    const auto flush = [&] {
        if (!literal.empty()) {
            Piece piece;
            piece.text = std::move(literal);
            format.pieces_.push_back(std::move(piece));
        }
        literal.clear();
    };
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
            literal += c;
            i += 2;
            continue;
        }
        if (c == '}')
            return bad("a '}' closes no field (write }} for a brace)", i);
        if (c != '{') {
            literal += c;
            ++i;
            continue;
        }
        const std::size_t close = text.find('}', i);
        if (close == std::string_view::npos)
            return bad("a '{' is not closed", i);
        const std::string_view inside = text.substr(i + 1, close - i - 1);
        const std::size_t colon = inside.find(':');
        Piece piece;
        piece.field = true;
        piece.text = std::string(inside.substr(0, colon));
        const auto heading = headings.find(piece.text);
        if (heading == headings.end()) {
            std::string known;
            for (const auto& [name, ignored] : headings)
                known += (known.empty() ? "" : ", ") + name;
            return Error(
                where, "--format: unknown field " + quote(piece.text) + " (known: " + known + ")");
        }
        piece.heading = heading->second;
        if (colon != std::string_view::npos) {
            std::string_view spec = inside.substr(colon + 1);
            const std::size_t spec_offset = i + 1 + colon + 1;
            if (spec.size() >= 2 && is_align(spec[1])) {
                piece.fill = spec[0];
                piece.align = spec[1];
                spec.remove_prefix(2);
            } else if (!spec.empty() && is_align(spec[0])) {
                piece.align = spec[0];
                spec.remove_prefix(1);
            }
            const auto number = [&spec]() -> std::optional<std::size_t> {
                std::size_t digits = 0, value = 0;
                while (digits < spec.size() &&
                       std::isdigit(static_cast<unsigned char>(spec[digits])) && digits < 6)
                    value = value * 10 + static_cast<std::size_t>(spec[digits++] - '0');
                if (digits == 0)
                    return std::nullopt;
                spec.remove_prefix(digits);
                return value;
            };
            piece.width = number().value_or(0);
            if (!spec.empty() && spec[0] == '.') {
                spec.remove_prefix(1);
                piece.precision = number();
                if (!piece.precision || *piece.precision == 0)
                    return bad("a precision is a positive number of characters", spec_offset);
            }
            if (!spec.empty() && spec[0] == '+') {
                piece.mark_cut = true;
                spec.remove_prefix(1);
            }
            if (!spec.empty())
                return bad("bad spec of field " + quote(piece.text) +
                               " (expected [[FILL]<|>|^][WIDTH][.PRECISION][+])",
                           spec_offset);
        }
        flush();
        format.pieces_.push_back(std::move(piece));
        i = close + 1;
    }
    flush();
    return format;
}

std::vector<std::string> OutputFormat::fields() const {
    std::vector<std::string> names;
    for (const Piece& piece : pieces_)
        if (piece.field)
            names.push_back(piece.text);
    return names;
}

std::string OutputFormat::cell(const Piece& piece, const std::string& value) const {
    if (!piece.precision || value.size() <= *piece.precision)
        return value;
    if (piece.mark_cut)
        return value.substr(0, *piece.precision - 1) + '+';
    return value.substr(0, *piece.precision);
}

void OutputFormat::print(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                         bool header) const {
    std::vector<std::vector<std::string>> lines;
    if (header) {
        std::vector<std::string> headings;
        for (const Piece& piece : pieces_)
            if (piece.field)
                headings.push_back(piece.heading);
        lines.push_back(std::move(headings));
    }
    lines.insert(lines.end(), rows.begin(), rows.end());
    // Each column as wide as its widest cell, its heading counted even
    // when not printed: the columns do not move with -n.
    std::vector<std::size_t> widths;
    for (const Piece& piece : pieces_) {
        if (!piece.field)
            continue;
        const std::size_t column = widths.size();
        std::size_t width = std::max(piece.width, piece.heading.size());
        for (const auto& row : rows)
            if (column < row.size())
                width = std::max(width, cell(piece, row[column]).size());
        widths.push_back(width);
    }
    for (std::size_t k = 0; k < lines.size(); ++k) {
        const auto& values = lines[k];
        const bool is_header = header && k == 0;
        std::string line;
        std::size_t column = 0;
        for (const Piece& piece : pieces_) {
            if (!piece.field) {
                line += piece.text;
                continue;
            }
            // Headings are never cut: a column is at least as wide as its own.
            const std::string& text = column < values.size() ? values[column] : std::string();
            const std::string value = is_header ? text : cell(piece, text);
            const std::size_t pad = widths[column++] - value.size();
            const std::size_t before = piece.align == '>' ? pad : piece.align == '^' ? pad / 2 : 0;
            const char fill = is_header ? ' ' : piece.fill;  // a heading is not a number
            line += std::string(before, fill) + value + std::string(pad - before, fill);
        }
        line.erase(line.find_last_not_of(' ') + 1);
        out << line << '\n';
    }
}

// 2025-03-04T10:11:12.345678Z (UTC, microseconds).
std::string iso_time(double epoch) {
    const double whole = std::floor(epoch);
    auto micros = static_cast<long>(std::lround((epoch - whole) * 1e6));
    auto seconds = static_cast<std::time_t>(whole);
    if (micros == 1000000) {
        micros = 0;
        ++seconds;
    }
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
    char text[48];
    std::snprintf(text, sizeof text, "%s.%06ldZ", date, micros);
    return text;
}

}  // namespace gantry::cli
