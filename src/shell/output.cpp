#include "shell/output.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "util/text.h"

namespace gantry::shell {
namespace {

// The bytes up to and including the last newline of `bytes` (empty: none).
std::string_view whole_lines(std::string_view bytes) {
    const void* last = ::memrchr(bytes.data(), '\n', bytes.size());
    if (!last)
        return {};
    return bytes.substr(0, static_cast<const char*>(last) - bytes.data() + 1);
}

// The length of the first line of `bytes` with its newline, or all of it.
std::size_t first_line_length(std::string_view bytes) {
    const void* newline = std::memchr(bytes.data(), '\n', bytes.size());
    return newline ? static_cast<const char*>(newline) - bytes.data() + 1 : bytes.size();
}

}  // namespace

LineAssembler::LineAssembler(std::string label, bool unbuffered,
                             std::string_view timestamped_stream)
    : label_(std::move(label)), unbuffered_(unbuffered) {
    if (!timestamped_stream.empty())
        stream_tag_ = "<" + std::string(timestamped_stream) + ">:";
}

const std::string& LineAssembler::prefix() {
    if (stream_tag_.empty())
        return label_;
    prefix_ = ctime_text(std::time(nullptr));
    prefix_ += stream_tag_;
    prefix_ += label_;
    return prefix_;
}

void LineAssembler::add(std::string_view bytes, std::string& scratch, ByteWriter& out) {
    if (bytes.empty())
        return;
    if (unbuffered_) {
        write_unbuffered(bytes, scratch, out);
        return;
    }
    if (!tail_.empty()) {
        // Complete the line kept from the previous call first.
        const std::size_t first = first_line_length(bytes);
        if (bytes[first - 1] != '\n') {
            keep_tail(bytes, scratch, out);
            return;
        }
        tail_.append(bytes.substr(0, first));
        write_lines(tail_, scratch, out);
        clear_tail();
        bytes.remove_prefix(first);
    }
    const std::string_view lines = whole_lines(bytes);
    if (!lines.empty())
        write_lines(lines, scratch, out);
    keep_tail(bytes.substr(lines.size()), scratch, out);
}

void LineAssembler::finish(std::string& scratch, ByteWriter& out) {
    if (tail_.empty())
        return;
    write_lines(tail_, scratch, out);
    clear_tail();
}

void LineAssembler::keep_tail(std::string_view bytes, std::string& scratch, ByteWriter& out) {
    while (!bytes.empty()) {
        const std::size_t take = std::min(bytes.size(), kLongestLine - tail_.size());
        if (take == kLongestLine) {
            write_lines(bytes.substr(0, take), scratch, out);  // no copy through the tail
        } else {
            tail_.append(bytes.substr(0, take));
            if (tail_.size() == kLongestLine) {
                write_lines(tail_, scratch, out);
                clear_tail();
            }
        }
        bytes.remove_prefix(take);
    }
}

void LineAssembler::clear_tail() {
    tail_.clear();
    if (tail_.capacity() > 4096)
        std::string().swap(tail_);  // a rare long line gives its memory back
}

void LineAssembler::write_lines(std::string_view lines, std::string& scratch, ByteWriter& out) {
    const std::string& prefix = this->prefix();
    if (prefix.empty()) {
        out.write(lines);
        return;
    }
    scratch.clear();
    while (!lines.empty()) {
        const std::size_t length = first_line_length(lines);
        scratch.append(prefix);
        scratch.append(lines.substr(0, length));
        lines.remove_prefix(length);
    }
    out.write(scratch);
}

void LineAssembler::write_unbuffered(std::string_view bytes, std::string& scratch,
                                     ByteWriter& out) {
    const std::string& prefix = this->prefix();
    if (prefix.empty()) {
        out.write(bytes);
        return;
    }
    scratch.clear();
    while (!bytes.empty()) {
        if (at_line_start_)
            scratch.append(prefix);
        const std::size_t length = first_line_length(bytes);
        scratch.append(bytes.substr(0, length));
        at_line_start_ = bytes[length - 1] == '\n';
        bytes.remove_prefix(length);
    }
    out.write(scratch);
}

std::string ctime_text(std::time_t when) {
    std::tm local{};
    ::localtime_r(&when, &local);
    char text[64];
    // ctime's layout in every locale: its names are the C locale's.
    static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::snprintf(text, sizeof text, "%s %s %2d %02d:%02d:%02d %d", kDays[local.tm_wday % 7],
                  kMonths[local.tm_mon % 12], local.tm_mday, local.tm_hour, local.tm_min,
                  local.tm_sec, local.tm_year + 1900);
    return text;
}

std::string expand_template(std::string_view pattern, const TemplateValues& values) {
    std::string name;
    while (!pattern.empty()) {
        if (pattern.starts_with("{{id}}")) {
            name.append(values.id);
            pattern.remove_prefix(6);
        } else if (pattern.starts_with("{{taskid}}")) {
            append_number(name, values.taskid);
            pattern.remove_prefix(10);
        } else if (pattern.starts_with("{{node}}")) {
            name.append(values.node);
            pattern.remove_prefix(8);
        } else {
            name.push_back(pattern.front());
            pattern.remove_prefix(1);
        }
    }
    return name;
}

Status check_template(std::string_view domain, std::string_view option, std::string_view pattern) {
    for (std::size_t open = pattern.find("{{"); open != std::string_view::npos;
         open = pattern.find("{{", open + 2)) {
        const std::size_t close = pattern.find("}}", open + 2);
        if (close == std::string_view::npos)
            break;
        const std::string_view name = pattern.substr(open + 2, close - open - 2);
        const bool word = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        });
        if (word && name != "id" && name != "taskid" && name != "node")
            return Error::in(std::string(domain),
                             std::string(option) + ": unknown {{" + std::string(name) +
                                 "}} (known: {{id}}, {{taskid}}, {{node}})",
                             pattern);
    }
    return {};
}

}  // namespace gantry::shell
