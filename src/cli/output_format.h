// Tables of --format strings as flux spells them (flux-jobs(1), "OUTPUT
// FORMAT"): text with fields in braces, each with an optional width and
// alignment, `{id:>5} {name:<10.10+}`, and a header line made of the
// fields' headings in the same places.
//
// A field is `{NAME}` or `{NAME:SPEC}`, SPEC being `[[FILL]ALIGN][WIDTH][.PRECISION][+]`:
// ALIGN `<` (left, the default), `>` (right) or `^` (centred); WIDTH the
// column's least width; PRECISION cuts longer values to that many
// characters, and `+` marks a cut value with a last `+`. `{{` and `}}` are
// braces. Unlike Python's format, a column grows to its widest value and
// its heading (never cut), so that the columns stay aligned; each line ends
// without spaces.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gantry::cli {

// A time in seconds since the epoch as 2025-03-04T10:11:12.345678Z (UTC,
// microseconds), as the eventlog's --time-format=iso prints it.
std::string iso_time(double epoch);

class OutputFormat {
public:
    // Each field of `text` must be a key of `headings` (name -> heading);
    // otherwise `DOMAIN: --format: unknown field "x" (known: a, b, ...)`.
    static Result<OutputFormat> parse(std::string_view domain, std::string_view text,
                                      const std::map<std::string, std::string>& headings);

    // The fields' names, in the order they appear (repeats included).
    std::vector<std::string> fields() const;

    // Rows of values, one per field in fields()' order; with `header`, the
    // headings' line first.
    void print(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
               bool header) const;

private:
    struct Piece {
        std::string text;  // literal text; a field's name when `field`
        bool field = false;
        char fill = ' ';
        char align = '<';
        std::size_t width = 0;
        std::optional<std::size_t> precision;
        bool mark_cut = false;  // `+`
        std::string heading;
    };
    std::string cell(const Piece& piece, const std::string& value) const;

    std::vector<Piece> pieces_;
};

}  // namespace gantry::cli
