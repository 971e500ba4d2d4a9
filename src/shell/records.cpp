#include "shell/records.h"

#include <charconv>
#include <climits>
#include <utility>
#include <vector>

#include "util/text.h"

namespace gantry::shell::records {
namespace {

constexpr std::string_view kDomain = "records";

// `text` as a canonical decimal number no greater than `max`: digits only,
// no leading zero unless it is "0". Anything else would not re-encode to
// the same bytes.
std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t max) {
    if (text.empty() || (text.size() > 1 && text[0] == '0'))
        return std::nullopt;
    for (const char c : text)
        if (c < '0' || c > '9')
            return std::nullopt;
    std::uint64_t n = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (error != std::errc() || end != text.data() + text.size() || n > max)
        return std::nullopt;
    return n;
}

// The fields of a header line, split at single spaces (an empty field, from
// two spaces in a row or one at either end, makes the line bad).
std::vector<std::string_view> fields_of(std::string_view line) {
    std::vector<std::string_view> fields;
    while (true) {
        const std::size_t space = line.find(' ');
        fields.push_back(line.substr(0, space));
        if (space == std::string_view::npos)
            return fields;
        line.remove_prefix(space + 1);
    }
}

Error error_at(const std::string& message, std::size_t offset) {
    return Error(std::string(kDomain), message + " at byte " + std::to_string(offset));
}

// The first line of `pending` without its newline; nothing while the line
// has not all arrived; an error when no newline comes within kMaxHeader
// bytes (`what` names the line in it).
Result<std::optional<std::string_view>> first_line(std::string_view pending, std::size_t offset,
                                                   std::string_view what) {
    const std::string_view window = pending.substr(0, kMaxHeader);
    const std::size_t newline = window.find('\n');
    if (newline != std::string_view::npos)
        return std::optional<std::string_view>(pending.substr(0, newline));
    if (window.size() < kMaxHeader)
        return std::optional<std::string_view>();
    return error_at(std::string(what) + " " + quote(window, 16) + " longer than " +
                        std::to_string(kMaxHeader) + " bytes",
                    offset);
}

std::string_view keyword(Record::Kind kind) {
    switch (kind) {
        case Record::Kind::kStdout:
            return "out";
        case Record::Kind::kStderr:
            return "err";
        case Record::Kind::kMessage:
            return "msg";
        case Record::Kind::kStarted:
            return "started";
        case Record::Kind::kExit:
            return "exit";
        case Record::Kind::kFence:
            return "fence";
        case Record::Kind::kModexRequest:
            return "dmodex";
        case Record::Kind::kModex:
            return "modex";
        case Record::Kind::kNoModex:
            return "nomodex";
    }
    return "";
}

// A header line parsed: the record without its bytes, and how many bytes
// follow the header.
struct Header {
    Record record;
    std::size_t length = 0;
};

std::optional<Header> parse_header(std::string_view line) {
    const std::vector<std::string_view> fields = fields_of(line);
    const std::string_view kind = fields[0];
    Header header;
    if ((kind == "out" || kind == "err") && fields.size() == 3) {
        const auto rank = parse_number(fields[1], UINT32_MAX);
        const auto length = parse_number(fields[2], UINT64_MAX);
        if (!rank || !length)
            return std::nullopt;
        header.record.kind = kind == "out" ? Record::Kind::kStdout : Record::Kind::kStderr;
        header.record.rank = static_cast<std::uint32_t>(*rank);
        header.length = *length;
    } else if (kind == "msg" && fields.size() == 2) {
        const auto length = parse_number(fields[1], UINT64_MAX);
        if (!length)
            return std::nullopt;
        header.record.kind = Record::Kind::kMessage;
        header.length = *length;
    } else if (kind == "fence" && fields.size() == 2) {
        const auto length = parse_number(fields[1], UINT64_MAX);
        if (!length)
            return std::nullopt;
        header.record.kind = Record::Kind::kFence;
        header.length = *length;
    } else if (kind == "started" && fields.size() == 1) {
        header.record.kind = Record::Kind::kStarted;
    } else if (kind == "dmodex" && fields.size() == 4) {
        const auto rank = parse_number(fields[1], UINT32_MAX);
        const auto node = parse_number(fields[2], UINT32_MAX);
        const auto length = parse_number(fields[3], kMaxKey);
        if (!rank || !node || !length)
            return std::nullopt;
        header.record.kind = Record::Kind::kModexRequest;
        header.record.rank = static_cast<std::uint32_t>(*rank);
        header.record.node = static_cast<std::uint32_t>(*node);
        header.length = *length;
    } else if (kind == "modex" && fields.size() == 3) {
        const auto rank = parse_number(fields[1], UINT32_MAX);
        const auto length = parse_number(fields[2], UINT64_MAX);
        if (!rank || !length)
            return std::nullopt;
        header.record.kind = Record::Kind::kModex;
        header.record.rank = static_cast<std::uint32_t>(*rank);
        header.length = *length;
    } else if (kind == "nomodex" && fields.size() == 2) {
        const auto rank = parse_number(fields[1], UINT32_MAX);
        if (!rank)
            return std::nullopt;
        header.record.kind = Record::Kind::kNoModex;
        header.record.rank = static_cast<std::uint32_t>(*rank);
    } else if (kind == "exit" && fields.size() == 3) {
        const auto rank = parse_number(fields[1], UINT32_MAX);
        const auto status = parse_number(fields[2], INT_MAX);
        if (!rank || !status)
            return std::nullopt;
        header.record.kind = Record::Kind::kExit;
        header.record.rank = static_cast<std::uint32_t>(*rank);
        header.record.wait_status = static_cast<int>(*status);
    } else {
        return std::nullopt;
    }
    return header;
}

// A control message's header, and the length of the bytes that follow it
// (a fence's).
std::optional<std::pair<Control, std::size_t>> parse_control(std::string_view line) {
    const std::vector<std::string_view> fields = fields_of(line);
    if (fields[0] == "terminate" && fields.size() == 1)
        return std::pair{Control{Control::Kind::kTerminate, 0}, std::size_t{0}};
    if (fields[0] == "signal" && fields.size() == 2) {
        const auto signal = parse_number(fields[1], kMaxSignal);
        if (signal && *signal >= 1)
            return std::pair{Control{Control::Kind::kSignal, static_cast<int>(*signal)},
                             std::size_t{0}};
    }
    if (fields[0] == "fence" && fields.size() == 2) {
        if (const auto length = parse_number(fields[1], UINT64_MAX))
            return std::pair{Control{Control::Kind::kFence, 0}, static_cast<std::size_t>(*length)};
    }
    // The direct modex messages: a task's rank, and a modex's length.
    const auto rank = fields.size() >= 2 ? parse_number(fields[1], UINT32_MAX) : std::nullopt;
    if (!rank)
        return std::nullopt;
    Control modex{.rank = static_cast<std::uint32_t>(rank.value_or(0))};
    if (fields[0] == "dmodex" && fields.size() == 3) {
        modex.kind = Control::Kind::kModexRequest;
        if (const auto length = parse_number(fields[2], kMaxKey))
            return std::pair{modex, static_cast<std::size_t>(*length)};
    }
    if (fields[0] == "nomodex" && fields.size() == 2) {
        modex.kind = Control::Kind::kNoModex;
        return std::pair{modex, std::size_t{0}};
    }
    if (fields[0] == "modex" && fields.size() == 3) {
        modex.kind = Control::Kind::kModex;
        if (const auto length = parse_number(fields[2], UINT64_MAX))
            return std::pair{modex, static_cast<std::size_t>(*length)};
    }
    return std::nullopt;
}

}  // namespace

void append_header(std::string& out, Record::Kind kind, std::uint32_t rank, std::size_t length) {
    out.append(keyword(kind));
    if (kind != Record::Kind::kMessage) {
        out.push_back(' ');
        append_number(out, rank);
    }
    out.push_back(' ');
    append_number(out, length);
    out.push_back('\n');
}

void append(std::string& out, const Record& record) {
    switch (record.kind) {
        case Record::Kind::kStdout:
        case Record::Kind::kStderr:
        case Record::Kind::kMessage:
            append_header(out, record.kind, record.rank, record.bytes.size());
            out.append(record.bytes);
            return;
        case Record::Kind::kFence:
            out.append("fence ");
            append_number(out, record.bytes.size());
            out.push_back('\n');
            out.append(record.bytes);
            return;
        case Record::Kind::kStarted:
            out.append("started\n");
            return;
        case Record::Kind::kModexRequest:
            out.append("dmodex ");
            append_number(out, record.rank);
            out.push_back(' ');
            append_number(out, record.node);
            out.push_back(' ');
            append_number(out, record.bytes.size());
            out.push_back('\n');
            out.append(record.bytes);
            return;
        case Record::Kind::kModex:
            out.append("modex ");
            append_number(out, record.rank);
            out.push_back(' ');
            append_number(out, record.bytes.size());
            out.push_back('\n');
            out.append(record.bytes);
            return;
        case Record::Kind::kNoModex:
            out.append("nomodex ");
            append_number(out, record.rank);
            out.push_back('\n');
            return;
        case Record::Kind::kExit:
            out.append("exit ");
            append_number(out, record.rank);
            out.push_back(' ');
            append_number(out, static_cast<std::uint64_t>(record.wait_status));
            out.push_back('\n');
            return;
    }
}

std::string encode(const Record& record) {
    std::string out;
    append(out, record);
    return out;
}

std::string encode(const Control& control) {
    std::string out;
    switch (control.kind) {
        case Control::Kind::kTerminate:
            return "terminate\n";
        case Control::Kind::kSignal:
            out = "signal ";
            append_number(out, static_cast<std::uint64_t>(control.signal));
            break;
        case Control::Kind::kFence:
            out = "fence ";
            append_number(out, control.bytes.size());
            break;
        case Control::Kind::kModexRequest:
            out = "dmodex ";
            append_number(out, control.rank);
            out.push_back(' ');
            append_number(out, control.bytes.size());
            break;
        case Control::Kind::kModex:
            out = "modex ";
            append_number(out, control.rank);
            out.push_back(' ');
            append_number(out, control.bytes.size());
            break;
        case Control::Kind::kNoModex:
            out = "nomodex ";
            append_number(out, control.rank);
            break;
    }
    out.push_back('\n');
    out.append(control.bytes);
    return out;
}

bool ModexRequests::add(std::uint32_t task, std::string key, Answer answer) {
    std::deque<Group>& groups = waiting_[task];
    for (Group& group : groups)
        if (group.key == key) {
            group.answers.push_back(std::move(answer));
            return false;
        }
    groups.push_back(Group{std::move(key), {std::move(answer)}});
    return groups.size() == 1;
}

std::optional<std::string> ModexRequests::answer(std::uint32_t task,
                                                 const std::optional<std::string>& data) {
    const auto found = waiting_.find(task);
    if (found == waiting_.end())
        return std::nullopt;
    const Group answered = std::move(found->second.front());
    found->second.pop_front();
    std::optional<std::string> next;
    if (found->second.empty())
        waiting_.erase(found);
    else
        next = found->second.front().key;
    for (const Answer& answer : answered.answers)
        answer(data);
    return next;
}

void ModexRequests::refuse_all() {
    for (auto& [task, groups] : std::exchange(waiting_, {}))
        for (const Group& group : groups)
            for (const Answer& answer : group.answers)
                answer(std::nullopt);
}

namespace detail {

void Pending::append(std::string_view bytes) {
    // What is consumed goes once it is most of the buffer: a record's bytes
    // are copied out once, and the buffer does not grow without bound.
    if (start_ > 0 && start_ >= bytes_.size() / 2) {
        bytes_.erase(0, start_);
        start_ = 0;
    }
    bytes_.append(bytes);
}

void Pending::consume(std::size_t count) {
    start_ += count;
    offset_ += count;
    if (start_ == bytes_.size()) {
        bytes_.clear();
        start_ = 0;
    }
}

}  // namespace detail

void Reader::append(std::string_view bytes) {
    if (!error_)
        pending_.append(bytes);
}

Result<std::optional<Record>> Reader::next() {
    if (error_)
        return *error_;
    const std::string_view pending = pending_.view();
    const std::size_t offset = pending_.offset();
    auto line = first_line(pending, offset, "header");
    if (!line) {
        error_ = line.error();
        return *error_;
    }
    if (!*line)
        return std::optional<Record>();
    auto header = parse_header(**line);
    if (!header) {
        error_ = error_at("bad header " + quote(**line), offset);
        return *error_;
    }
    if (header->length > kMaxLength) {
        error_ = error_at("length " + std::to_string(header->length) + " over the " +
                              std::to_string(kMaxLength) + "-byte limit",
                          offset);
        return *error_;
    }
    const std::size_t header_size = (*line)->size() + 1;
    if (pending.size() - header_size < header->length)
        return std::optional<Record>();  // its bytes are still on their way
    header->record.bytes.assign(pending.substr(header_size, header->length));
    pending_.consume(header_size + header->length);
    return std::optional<Record>(std::move(header->record));
}

void ControlReader::append(std::string_view bytes) {
    if (!error_)
        pending_.append(bytes);
}

Result<std::optional<Control>> ControlReader::next() {
    if (error_)
        return *error_;
    const std::size_t offset = pending_.offset();
    auto line = first_line(pending_.view(), offset, "control message");
    if (!line) {
        error_ = line.error();
        return *error_;
    }
    if (!*line)
        return std::optional<Control>();
    auto control = parse_control(**line);
    if (!control) {
        error_ = error_at("bad control message " + quote(**line), offset);
        return *error_;
    }
    auto& [message, length] = *control;
    if (length > kMaxFence) {
        error_ = error_at("length " + std::to_string(length) + " over the " +
                              std::to_string(kMaxFence) + "-byte limit",
                          offset);
        return *error_;
    }
    const std::size_t header_size = (*line)->size() + 1;
    const std::string_view pending = pending_.view();
    if (pending.size() - header_size < length)
        return std::optional<Control>();  // its bytes are still on their way
    message.bytes.assign(pending.substr(header_size, length));
    pending_.consume(header_size + length);
    return std::optional<Control>(std::move(message));
}

std::string encode_key_values(const KeyValues& puts) {
    std::string out;
    for (const auto& [key, value] : puts) {
        out.append(key);
        out.push_back('=');
        out.append(value);
        out.push_back('\n');
    }
    return out;
}

Result<KeyValues> parse_key_values(std::string_view bytes) {
    KeyValues puts;
    std::size_t line = 1;
    while (!bytes.empty()) {
        const auto newline = bytes.find('\n');
        if (newline == std::string_view::npos)
            return Error("records", "fence line " + std::to_string(line) + " has no newline");
        const std::string_view entry = bytes.substr(0, newline);
        const auto equals = entry.find('=');
        if (equals == std::string_view::npos || equals == 0)
            return Error("records", "fence line " + std::to_string(line) +
                                        " is not KEY=VALUE: " + quote(entry, 16));
        puts.insert_or_assign(std::string(entry.substr(0, equals)),
                              std::string(entry.substr(equals + 1)));
        bytes.remove_prefix(newline + 1);
        ++line;
    }
    return puts;
}

}  // namespace gantry::shell::records
