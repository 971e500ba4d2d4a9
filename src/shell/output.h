// What the tasks' stdout and stderr become on the way to their destination:
// whole lines, labelled on request, and the file names of --output/--error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gantry::shell {

// Where assembled output goes (a Sink; a string in tests).
class ByteWriter {
public:
    virtual ~ByteWriter() = default;
    virtual void write(std::string_view bytes) = 0;
};

// Turns the bytes of one task's stdout or stderr into writes of whole
// lines: every write holds complete lines only, so that a line of one task
// is never split or mixed with another's, whatever else the destination
// receives between two writes. Keeps only the unterminated tail between
// calls. Two exceptions, both documented in docs/shell.md: an unterminated
// line reaching kLongestLine bytes is passed on as it stands and the rest
// of it follows as a line of its own (labelled again), so that a task
// writing without newlines costs bounded memory; and the last line is passed
// on at end of file even without a newline.
//
// Unbuffered, bytes are passed on as they come (labels still start lines).
class LineAssembler {
public:
    static constexpr std::size_t kLongestLine = 64 * 1024;

    // `label` goes before every line ("3: "); empty: none. With a
    // `timestamped_stream` ("stdout"), the time and the stream go before the
    // label, as Open MPI's --timestamp-output writes them:
    // "Wed Nov 25 21:52:50 2026<stdout>:3: ". The time is the local time at
    // which the line is passed on, to the second.
    LineAssembler(std::string label, bool unbuffered, std::string_view timestamped_stream = {});

    // `scratch` is any string the caller lends for building labelled writes
    // (one for all streams, so that none keeps a buffer of its own).
    void add(std::string_view bytes, std::string& scratch, ByteWriter& out);
    // End of file: passes on the unterminated last line, if any.
    void finish(std::string& scratch, ByteWriter& out);

private:
    // `lines` whole, labelled; the last may lack its newline.
    void write_lines(std::string_view lines, std::string& scratch, ByteWriter& out);
    void write_unbuffered(std::string_view bytes, std::string& scratch, ByteWriter& out);
    // Keeps `bytes` (no newline in them) after the tail, passing on every
    // kLongestLine bytes of it.
    void keep_tail(std::string_view bytes, std::string& scratch, ByteWriter& out);
    void clear_tail();
    // What goes before a line passed on now.
    const std::string& prefix();

    std::string label_;
    std::string stream_tag_;  // "<stdout>:"; empty: no timestamps
    std::string prefix_;      // the time, stream_tag_ and label_, when timestamped
    bool unbuffered_ = false;
    bool at_line_start_ = true;  // unbuffered: whether the next byte starts a line
    std::string tail_;           // an unterminated line, shorter than kLongestLine
};

// The values an --output or --error template names: {{id}} the job,
// {{taskid}} the rank, {{node}} the node's host name.
struct TemplateValues {
    std::string_view id;
    std::uint32_t taskid = 0;
    std::string_view node;
};

// `pattern` with every {{id}}, {{taskid}} and {{node}} replaced; any other
// text, braces included, is kept as it is. Tasks whose names come out the
// same share one file (so a pattern without {{taskid}} gives one file).
// `when` in the local time zone as ctime(3) writes it, without its newline:
// "Wed Nov  5 09:02:03 2026".
std::string ctime_text(std::time_t when);

std::string expand_template(std::string_view pattern, const TemplateValues& values);

// Refuses a {{name}} in `pattern` that is none of those three (a typing
// error would otherwise name a file "out.{{tasid}}"), naming it and the
// known ones; `option` (--output, --error) and `domain` are for the message.
Status check_template(std::string_view domain, std::string_view option, std::string_view pattern);

}  // namespace gantry::shell
