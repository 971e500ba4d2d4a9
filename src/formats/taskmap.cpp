#include "formats/taskmap.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "util/json.h"
#include "util/text.h"

namespace gantry {

namespace {

constexpr std::string_view kDomain = "taskmap";
constexpr std::uint64_t kMaxField = IdSet::kMaxId;  // every block field fits an int
constexpr std::string_view kFieldNames[] = {"nodeid", "nnodes", "ppn", "repeat"};

Error error_at(std::string message, std::string_view input, std::size_t offset) {
    return Error::at(std::string(kDomain), std::move(message), input, offset);
}

Error error_in(std::string message, std::string_view input) {
    return Error::in(std::string(kDomain), std::move(message), input);
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_json_space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && is_json_space(text.back()))
        text.remove_suffix(1);
    return text;
}

// A block's fields, checked against the RFC and the id limits; `field_at`
// gives the offset of each field for the message.
template <class OffsetOf>
Status check_block(const TaskMap::Block& b, std::size_t index, std::string_view input,
                   OffsetOf field_at) {
    const std::uint32_t fields[] = {b.nodeid, b.nnodes, b.ppn, b.repeat};
    for (std::size_t i = 1; i < 4; ++i)
        if (fields[i] == 0)
            return error_at("block " + std::to_string(index) + " has " +
                                std::string(kFieldNames[i]) + " 0 (must be 1 or more)",
                            input, field_at(i));
    if (std::uint64_t{b.nodeid} + b.nnodes - 1 > TaskMap::kMaxNodeId)
        return error_at("block " + std::to_string(index) + " runs past node " +
                            std::to_string(TaskMap::kMaxNodeId),
                        input, field_at(1));
    return {};
}

Error too_many_tasks(std::size_t index, std::string_view input, std::size_t offset) {
    return error_at("block " + std::to_string(index) + " takes the map past " +
                        std::to_string(TaskMap::kMaxTasks) + " tasks",
                    input, offset);
}

// ---- JSON --------------------------------------------------------------

// Skips one JSON value of text already known to be valid JSON; returns the
// offset just past it. Used to find where blocks and fields start, so that
// errors can name their offset.
std::size_t skip_json_value(std::string_view text, std::size_t pos) {
    if (pos >= text.size())
        return pos;
    const char c = text[pos];
    if (c == '"') {
        for (++pos; pos < text.size() && text[pos] != '"'; ++pos)
            if (text[pos] == '\\')
                ++pos;
        return std::min(pos + 1, text.size());
    }
    if (c == '[' || c == '{') {
        int depth = 0;
        for (; pos < text.size(); ++pos) {
            const char d = text[pos];
            if (d == '"') {
                pos = skip_json_value(text, pos) - 1;
            } else if (d == '[' || d == '{') {
                ++depth;
            } else if ((d == ']' || d == '}') && --depth == 0) {
                return pos + 1;
            }
        }
        return pos;
    }
    while (pos < text.size() && !is_json_space(text[pos]) && text[pos] != ',' && text[pos] != ']' &&
           text[pos] != '}')
        ++pos;
    return pos;
}

std::size_t skip_space(std::string_view text, std::size_t pos) {
    while (pos < text.size() && is_json_space(text[pos]))
        ++pos;
    return pos;
}

// Offsets of the elements of the JSON array that starts at `open`.
std::vector<std::size_t> element_offsets(std::string_view text, std::size_t open) {
    std::vector<std::size_t> offsets;
    std::size_t pos = skip_space(text, open + 1);
    while (pos < text.size() && text[pos] != ']') {
        offsets.push_back(pos);
        pos = skip_space(text, skip_json_value(text, pos));
        if (pos < text.size() && text[pos] == ',')
            pos = skip_space(text, pos + 1);
    }
    return offsets;
}

// Offset of the value of top-level key `key` in the JSON object at `open`.
std::size_t member_offset(std::string_view text, std::size_t open, std::string_view key) {
    std::size_t pos = skip_space(text, open + 1);
    while (pos < text.size() && text[pos] == '"') {
        const std::size_t key_end = skip_json_value(text, pos);
        const bool match = text.substr(pos, key_end - pos) == "\"" + std::string(key) + "\"";
        pos = skip_space(text, key_end);
        pos = skip_space(text, pos + 1);  // ':'
        if (match)
            return pos;
        pos = skip_space(text, skip_json_value(text, pos));
        if (pos < text.size() && text[pos] == ',')
            pos = skip_space(text, pos + 1);
    }
    return open;
}

std::string describe_json(const Json& value) {
    const std::string type = json_type_name(value);
    return (type == "array" || type == "object") ? "an " + type : "a " + type;
}

Result<std::uint32_t> json_field(const Json& value, std::size_t block, std::size_t field,
                                 std::string_view input, std::size_t offset) {
    const std::string what =
        "block " + std::to_string(block) + " has " + std::string(kFieldNames[field]);
    // nlohmann reads `-0` as a signed zero: it is 0 all the same.
    if (value.is_number_unsigned() ||
        (value.is_number_integer() && value.get<std::int64_t>() == 0)) {
        const auto n = value.is_number_unsigned() ? value.get<std::uint64_t>() : 0;
        if (n > kMaxField)
            return error_at(what + " " + std::to_string(n) + " (must be at most " +
                                std::to_string(kMaxField) + ")",
                            input, offset);
        return static_cast<std::uint32_t>(n);
    }
    if (value.is_number_integer())
        return error_at(
            what + " " + std::to_string(value.get<std::int64_t>()) + " (must be 0 or more)", input,
            offset);
    if (value.is_number())
        return error_at(what + " " + to_compact(value) + " (must be an integer)", input, offset);
    return error_at("block " + std::to_string(block) + " has " + describe_json(value) + " for " +
                        std::string(kFieldNames[field]) + " (must be an integer)",
                    input, offset);
}

// The blocks of the JSON array `map`, which starts at byte `open` of `input`.
Result<std::vector<TaskMap::Block>> blocks_from_json(const Json& map, std::string_view input,
                                                     std::size_t open) {
    const auto block_at = element_offsets(input, open);
    std::vector<TaskMap::Block> blocks;
    blocks.reserve(map.size());
    std::uint64_t ntasks = 0;
    for (std::size_t i = 0; i < map.size(); ++i) {
        const Json& entry = map[i];
        const std::size_t at = i < block_at.size() ? block_at[i] : open;
        if (!entry.is_array())
            return error_at("block " + std::to_string(i) + " is " + describe_json(entry) +
                                " (must be an array [nodeid,nnodes,ppn,repeat])",
                            input, at);
        if (entry.size() != 4)
            return error_at("block " + std::to_string(i) + " has " + std::to_string(entry.size()) +
                                " fields (must be [nodeid,nnodes,ppn,repeat])",
                            input, at);
        const auto field_at = element_offsets(input, at);
        const auto offset_of = [&](std::size_t f) {
            return f < field_at.size() ? field_at[f] : at;
        };
        std::uint32_t fields[4];
        for (std::size_t f = 0; f < 4; ++f) {
            auto n = json_field(entry[f], i, f, input, offset_of(f));
            if (!n)
                return n.error();
            fields[f] = *n;
        }
        const TaskMap::Block block{fields[0], fields[1], fields[2], fields[3]};
        if (auto ok = check_block(block, i, input, offset_of); !ok)
            return ok.error();
        ntasks += block.ntasks();
        if (ntasks > TaskMap::kMaxTasks)
            return too_many_tasks(i, input, at);
        blocks.push_back(block);
    }
    return blocks;
}

// Where the map array starts in a wrapped {"version":1,"map":[...]}.
Result<std::size_t> unwrap(const Json& object, std::string_view input, std::size_t open) {
    const auto version = object.find("version");
    if (version == object.end())
        return error_in("a wrapped task map needs \"version\"", input);
    if (!version->is_number_integer() || version->get<std::int64_t>() != 1)
        return error_at("version " + to_compact(*version) + " is not supported (must be 1)", input,
                        member_offset(input, open, "version"));
    const auto map = object.find("map");
    if (map == object.end())
        return error_in("a wrapped task map needs \"map\"", input);
    const std::size_t at = member_offset(input, open, "map");
    if (!map->is_array())
        return error_at("\"map\" is " + describe_json(*map) + " (must be an array of blocks)",
                        input, at);
    return at;
}

// ---- PMI ---------------------------------------------------------------

// Reads `(vector,(n,n,n),...)` left to right; offsets are into the input.
class PmiParser {
public:
    explicit PmiParser(std::string_view input) : input_(input) {}

    Result<std::vector<TaskMap::Block>> parse() {
        skip();
        if (!eat('('))
            return expected("'(vector,'");
        skip();
        if (input_.substr(pos_, 6) != "vector")
            return expected("'vector'");
        pos_ += 6;
        skip();
        std::vector<TaskMap::Block> blocks;
        while (eat(',')) {
            skip();
            if (peek() != '(')
                break;  // a trailing comma before ')' is allowed
            auto block = parse_block(blocks.size());
            if (!block)
                return block.error();
            blocks.push_back(*block);
            skip();
        }
        if (!eat(')'))
            return expected(blocks.empty() ? "',' and a block" : "',' or ')'");
        skip();
        if (pos_ != input_.size())
            return error_at("unexpected text after ')'", input_, pos_);
        if (blocks.empty())
            return error_at("a PMI process mapping needs at least one block", input_, pos_ - 1);
        return blocks;
    }

private:
    Result<TaskMap::Block> parse_block(std::size_t index) {
        const std::size_t open = pos_++;
        std::uint32_t fields[3];
        std::size_t field_at[3];
        for (std::size_t f = 0; f < 3; ++f) {
            skip();
            field_at[f] = pos_;
            auto n = parse_number(index, f);
            if (!n)
                return n.error();
            fields[f] = *n;
            skip();
            if (!eat(f < 2 ? ',' : ')'))
                return f < 2 ? expected("','")
                             : expected("')' (a PMI block is (nodeid,nnodes,ppn))");
        }
        const TaskMap::Block block{fields[0], fields[1], fields[2], 1};
        if (auto ok = check_block(block, index, input_,
                                  [&](std::size_t f) { return f < 3 ? field_at[f] : open; });
            !ok)
            return ok.error();
        return block;
    }

    Result<std::uint32_t> parse_number(std::size_t index, std::size_t field) {
        const std::size_t start = pos_;
        std::uint64_t n = 0;
        while (pos_ < input_.size() && is_digit(input_[pos_])) {
            n = std::min<std::uint64_t>(n * 10 + (input_[pos_] - '0'), kMaxField + 1);
            ++pos_;
        }
        if (pos_ == start)
            return expected("an integer for " + std::string(kFieldNames[field]));
        if (n > kMaxField)
            return error_at("block " + std::to_string(index) + " has " +
                                std::string(kFieldNames[field]) + " " +
                                std::string(input_.substr(start, pos_ - start)) +
                                " (must be at most " + std::to_string(kMaxField) + ")",
                            input_, start);
        return static_cast<std::uint32_t>(n);
    }

    char peek() const { return pos_ < input_.size() ? input_[pos_] : '\0'; }
    bool eat(char c) {
        if (peek() != c || pos_ >= input_.size())
            return false;
        ++pos_;
        return true;
    }
    void skip() { pos_ = skip_space(input_, pos_); }
    Error expected(const std::string& what) const {
        return error_at("expected " + what, input_, pos_);
    }

    std::string_view input_;
    std::size_t pos_ = 0;
};

// ---- raw ---------------------------------------------------------------

// One run of tasks of a raw map: [lo, hi] on `node`, from the field at `offset`.
struct RawRun {
    IdSet::Id lo;
    IdSet::Id hi;
    TaskMap::NodeId node;
    std::uint32_t offset;
};

std::string plural_tasks(const IdSet& ids, std::string_view singular, std::string_view plural) {
    return ids.count() == 1 ? "task " + ids.encode() + std::string(singular)
                            : "tasks " + ids.encode() + std::string(plural);
}

// Sorts runs by first task: a stable radix sort on the 31-bit ids, two
// passes of 16 bits, because a cyclic map has a million one-task runs.
void sort_by_first_task(std::vector<RawRun>& runs) {
    std::vector<RawRun> buffer(runs.size());
    for (const int shift : {0, 16}) {
        std::vector<std::size_t> start(65537, 0);
        for (const auto& run : runs)
            ++start[((run.lo >> shift) & 0xffff) + 1];
        for (std::size_t d = 1; d < start.size(); ++d)
            start[d] += start[d - 1];
        for (const auto& run : runs)
            buffer[start[(run.lo >> shift) & 0xffff]++] = run;
        runs.swap(buffer);
    }
}

// The raw map's runs sorted by task, checked to cover 0..N-1 exactly once.
Result<std::vector<RawRun>> runs_in_task_order(std::vector<RawRun> runs, std::string_view input) {
    if (std::is_sorted(runs.begin(), runs.end(),
                       [](const RawRun& a, const RawRun& b) { return a.lo < b.lo; }))
        ;  // block maps come in task order already
    else if (runs.size() < 64)
        std::sort(runs.begin(), runs.end(),
                  [](const RawRun& a, const RawRun& b) { return a.lo < b.lo; });
    else
        sort_by_first_task(runs);
    IdSet twice;
    IdSet missing;
    std::optional<std::size_t> twice_at;
    std::uint64_t next = 0;  // first task not yet seen
    for (const auto& run : runs) {
        if (run.lo > next)
            missing.insert(static_cast<IdSet::Id>(next), run.lo - 1);
        if (run.lo < next) {
            twice.insert(run.lo, static_cast<IdSet::Id>(std::min<std::uint64_t>(run.hi, next - 1)));
            if (!twice_at)
                twice_at = run.offset;
        }
        next = std::max<std::uint64_t>(next, std::uint64_t{run.hi} + 1);
    }
    if (twice_at)
        return error_at(
            plural_tasks(twice, " is on more than one node", " are on more than one node"), input,
            *twice_at);
    if (!missing.empty())
        return error_in(plural_tasks(missing, " is on no node", " are on no node"), input);
    return runs;
}

// Appends [lo, hi] to `out` as an RFC 22 field list, joining runs that touch.
class RangeWriter {
public:
    RangeWriter(std::string& out, bool ranges) : out_(out), ranges_(ranges) {}

    void add(std::uint64_t lo, std::uint64_t hi) {
        if (pending_ && lo == hi_ + 1) {
            hi_ = hi;
            return;
        }
        flush();
        pending_ = true;
        lo_ = lo;
        hi_ = hi;
    }

    // Writes the pending run; the next add starts a new idset.
    void finish() {
        flush();
        first_ = true;
    }

private:
    void flush() {
        if (!pending_)
            return;
        pending_ = false;
        if (!first_)
            out_ += ',';
        first_ = false;
        if (ranges_) {
            append_number(out_, lo_);
            if (hi_ > lo_) {
                out_ += '-';
                append_number(out_, hi_);
            }
            return;
        }
        for (std::uint64_t id = lo_; id <= hi_; ++id) {
            if (id > lo_)
                out_ += ',';
            append_number(out_, id);
        }
    }

    std::string& out_;
    bool ranges_;
    bool pending_ = false;
    bool first_ = true;
    std::uint64_t lo_ = 0;
    std::uint64_t hi_ = 0;
};

}  // namespace

// ---- parsing -----------------------------------------------------------

Result<TaskMap> TaskMap::parse(std::string_view text) {
    const std::string_view body = trim(text);
    if (body.empty())
        return TaskMap{};
    if (body.front() == '[' || body.front() == '{')
        return parse_json(text);
    if (body.front() == '(' || body.find("vector") != std::string_view::npos)
        return parse_pmi(text);
    return parse_raw(text);
}

Result<TaskMap> TaskMap::parse_json(std::string_view text) {
    auto json = gantry::parse_json(kDomain, text);
    if (!json)
        return json.error();
    const std::size_t open = skip_space(text, 0);
    std::size_t map_at = open;
    const Json* map = &*json;
    if (json->is_object()) {
        auto at = unwrap(*json, text, open);
        if (!at)
            return at.error();
        map_at = *at;
        map = &(*json)["map"];
    } else if (!json->is_array()) {
        return error_at("a JSON task map is an array of blocks or a {\"version\":1,\"map\":[...]}",
                        text, open);
    }
    auto blocks = blocks_from_json(*map, text, map_at);
    if (!blocks)
        return blocks.error();
    std::uint64_t ntasks = 0;
    for (const auto& b : *blocks)
        ntasks += b.ntasks();
    return TaskMap(std::move(*blocks), ntasks);
}

Result<TaskMap> TaskMap::parse_pmi(std::string_view text) {
    auto blocks = PmiParser(text).parse();
    if (!blocks)
        return blocks.error();
    // PMI has no repeat count: repeated blocks fold into one, as appending does.
    TaskMap map;
    for (std::size_t i = 0; i < blocks->size(); ++i) {
        const Block& b = (*blocks)[i];
        if (map.ntasks() + b.ntasks() > kMaxTasks)
            return error_in("block " + std::to_string(i) + " takes the map past " +
                                std::to_string(kMaxTasks) + " tasks",
                            text);
        (void)map.append(b.nodeid, b.nnodes, b.ppn);  // fields checked by the parser
    }
    return map;
}

Result<TaskMap> TaskMap::parse_raw(std::string_view text) {
    const std::size_t begin = skip_space(text, 0);
    const std::size_t end = begin + trim(text.substr(begin)).size();
    if (begin == end)
        return TaskMap{};
    if (end - begin > std::numeric_limits<std::uint32_t>::max())
        return error_in("the raw task map is too long", text);
    std::vector<RawRun> runs;
    NodeId node = 0;
    for (std::size_t field = begin;; ++node) {
        std::size_t semi = text.find(';', field);
        if (semi == std::string_view::npos || semi > end)
            semi = end;
        if (node > kMaxNodeId)
            return error_at("more than " + std::to_string(kMaxNodeId + std::uint64_t{1}) + " nodes",
                            text, field);
        // An empty field is a node without tasks, except a last one, which no
        // task map could say.
        if (field == semi && semi == end)
            return error_at(
                "the last node has no tasks (a task map ends with a node that has some)", text,
                field);
        auto ids = IdSet::parse(text.substr(field, semi - field));
        if (!ids)
            return error_at(ids.error().message(), text, field + ids.error().offset().value_or(0));
        for (const auto& r : ids->ranges())
            runs.push_back({r.lo, r.hi, node, static_cast<std::uint32_t>(field)});
        if (semi == end)
            break;
        field = semi + 1;
    }
    auto ordered = runs_in_task_order(std::move(runs), text);
    if (!ordered)
        return ordered.error();
    TaskMap map;
    for (const auto& run : *ordered)
        (void)map.append(run.node, 1, run.hi - run.lo + 1);  // checked above: cannot fail
    return map;
}

// ---- building ----------------------------------------------------------

TaskMap TaskMap::from_nodes(std::span<const NodeId> node_of_task) {
    TaskMap map;
    std::size_t i = 0;
    while (i < node_of_task.size()) {
        std::size_t run_end = i + 1;
        while (run_end < node_of_task.size() && node_of_task[run_end] == node_of_task[i])
            ++run_end;
        (void)map.append(node_of_task[i], 1, static_cast<std::uint32_t>(run_end - i));
        i = run_end;
    }
    return map;
}

Result<TaskMap> TaskMap::block(std::uint32_t nodes, std::uint32_t ppn) {
    TaskMap map;
    if (auto ok = map.append(0, nodes, ppn); !ok)
        return ok.error();
    return map;
}

Result<TaskMap> TaskMap::cyclic(std::uint32_t nodes, std::uint32_t ppn, std::uint32_t stride) {
    if (stride == 0)
        return Error(std::string(kDomain), "cyclic stride 0 (must be 1 or more)");
    auto map = block(nodes, ppn);
    if (!map || nodes == 1 || stride >= ppn)
        return map;  // one node, or one round: every deal is the block map
    // ppn / stride full rounds, then one short round: the forms appending
    // round by round gives, without dealing a billion rounds one by one.
    TaskMap dealt;
    dealt.blocks_.push_back({0, nodes, stride, ppn / stride});
    if (ppn % stride != 0)
        dealt.blocks_.push_back({0, nodes, ppn % stride, 1});
    dealt.ntasks_ = map->ntasks();
    return dealt;
}

Result<TaskMap> TaskMap::cyclic(const TaskMap& counts_from, std::uint32_t stride) {
    if (stride == 0)
        return Error(std::string(kDomain), "cyclic stride 0 (must be 1 or more)");
    const std::uint32_t nodes = counts_from.nnodes();
    std::vector<std::uint64_t> left(nodes);
    for (NodeId n = 0; n < nodes; ++n)
        left[n] = counts_from.ntasks(n);
    if (nodes > 0 && left[0] <= kMaxField &&
        std::all_of(left.begin(), left.end(), [&](auto c) { return c == left[0]; }))
        return cyclic(nodes, static_cast<std::uint32_t>(left[0]), stride);
    TaskMap map;
    for (std::uint64_t remaining = counts_from.ntasks(); remaining > 0;) {
        for (NodeId n = 0; n < nodes; ++n) {
            const auto take = std::min<std::uint64_t>(stride, left[n]);
            if (take == 0)
                continue;
            (void)map.append(n, 1, static_cast<std::uint32_t>(take));
            left[n] -= take;
            remaining -= take;
        }
    }
    return map;
}

Status TaskMap::append(NodeId nodeid, std::uint32_t nnodes, std::uint32_t ppn) {
    const auto failed = [&](const std::string& why) {
        return Error(std::string(kDomain), "append(" + std::to_string(nodeid) + "," +
                                               std::to_string(nnodes) + "," + std::to_string(ppn) +
                                               "): " + why);
    };
    if (nnodes == 0 || ppn == 0)
        return failed("nnodes and ppn must be 1 or more");
    if (nnodes > kMaxField || ppn > kMaxField || std::uint64_t{nodeid} + nnodes - 1 > kMaxNodeId)
        return failed("runs past node or task " + std::to_string(kMaxNodeId));
    const std::uint64_t added = std::uint64_t{nnodes} * ppn;
    if (ntasks_ + added > kMaxTasks)
        return failed("the map would pass " + std::to_string(kMaxTasks) + " tasks");
    ntasks_ += added;
    if (!blocks_.empty()) {
        Block& last = blocks_.back();
        // The next nodes with the same ppn extend the block.
        if (last.repeat == 1 && ppn == last.ppn &&
            std::uint64_t{nodeid} == std::uint64_t{last.nodeid} + last.nnodes &&
            std::uint64_t{last.nnodes} + nnodes <= kMaxField) {
            last.nnodes += nnodes;
            merge_tail_into_previous();
            return {};
        }
        // More tasks on the same single node widen it.
        if (last.repeat == 1 && last.nnodes == 1 && nnodes == 1 && nodeid == last.nodeid &&
            std::uint64_t{last.ppn} + ppn <= kMaxField) {
            last.ppn += ppn;
            merge_tail_into_previous();
            return {};
        }
        // The same nodes with the same ppn again are one more repeat.
        if (nodeid == last.nodeid && nnodes == last.nnodes && ppn == last.ppn &&
            last.repeat < kMaxField) {
            ++last.repeat;
            return {};
        }
    }
    blocks_.push_back({nodeid, nnodes, ppn, 1});
    return {};
}

// A last block grown into a copy of the one before it is one more repeat of it.
void TaskMap::merge_tail_into_previous() {
    if (blocks_.size() < 2)
        return;
    const Block& last = blocks_.back();
    Block& previous = blocks_[blocks_.size() - 2];
    if (last.nodeid == previous.nodeid && last.nnodes == previous.nnodes &&
        last.ppn == previous.ppn && std::uint64_t{previous.repeat} + last.repeat <= kMaxField) {
        previous.repeat += last.repeat;
        blocks_.pop_back();
    }
}

// ---- lookups -----------------------------------------------------------

std::uint32_t TaskMap::nnodes() const {
    std::uint64_t n = 0;
    for (const auto& b : blocks_)
        n = std::max(n, std::uint64_t{b.nodeid} + b.nnodes);
    return static_cast<std::uint32_t>(n);
}

std::optional<TaskMap::NodeId> TaskMap::nodeid(std::uint64_t task) const {
    std::uint64_t first = 0;  // first task of the block
    for (const auto& b : blocks_) {
        const std::uint64_t ntasks = b.ntasks();
        if (task < first + ntasks) {
            const std::uint64_t within_round = (task - first) % (std::uint64_t{b.nnodes} * b.ppn);
            return static_cast<NodeId>(b.nodeid + within_round / b.ppn);
        }
        first += ntasks;
    }
    return std::nullopt;
}

IdSet TaskMap::taskids(NodeId node) const {
    IdSet ids;
    std::uint64_t first = 0;
    for (const auto& b : blocks_) {
        if (node >= b.nodeid && node - b.nodeid < b.nnodes) {
            const std::uint64_t round = std::uint64_t{b.nnodes} * b.ppn;
            std::uint64_t lo = first + std::uint64_t{node - b.nodeid} * b.ppn;
            for (std::uint32_t r = 0; r < b.repeat; ++r, lo += round)
                ids.insert(static_cast<IdSet::Id>(lo), static_cast<IdSet::Id>(lo + b.ppn - 1));
        }
        first += b.ntasks();
    }
    return ids;
}

std::uint64_t TaskMap::ntasks(NodeId node) const {
    std::uint64_t n = 0;
    for (const auto& b : blocks_)
        if (node >= b.nodeid && node - b.nodeid < b.nnodes)
            n += std::uint64_t{b.ppn} * b.repeat;
    return n;
}

Status TaskMap::check(const TaskMap& reference) const {
    if (nnodes() != reference.nnodes())
        return Error(std::string(kDomain), "the map has " + counted(nnodes(), "node") +
                                               ", expected " + std::to_string(reference.nnodes()));
    if (ntasks() != reference.ntasks())
        return Error(std::string(kDomain), "the map has " + counted(ntasks(), "task") +
                                               ", expected " + std::to_string(reference.ntasks()));
    return {};
}

// ---- encoding ----------------------------------------------------------

std::string TaskMap::to_json() const {
    std::string out = "[";
    for (const auto& b : blocks_) {
        if (out.size() > 1)
            out += ',';
        out += '[';
        append_number(out, b.nodeid);
        out += ',';
        append_number(out, b.nnodes);
        out += ',';
        append_number(out, b.ppn);
        out += ',';
        append_number(out, b.repeat);
        out += ']';
    }
    out += ']';
    return out;
}

std::string TaskMap::to_wrapped() const {
    return "{\"version\":1,\"map\":" + to_json() + "}";
}

std::string TaskMap::to_pmi() const {
    if (blocks_.empty())
        return "";
    std::string out = "(vector";
    for (const auto& b : blocks_) {
        std::string one = ",(";
        append_number(one, b.nodeid);
        one += ',';
        append_number(one, b.nnodes);
        one += ',';
        append_number(one, b.ppn);
        one += ')';
        for (std::uint32_t r = 0; r < b.repeat; ++r)
            out += one;
    }
    out += ')';
    return out;
}

template <class OnRange, class OnNodeEnd>
void TaskMap::for_each_node_range(OnRange&& on_range, OnNodeEnd&& on_node_end) const {
    // Per node, the blocks that cover it (in block order, hence task order),
    // and each block's first task: node by node without a per-task array.
    const std::uint32_t nodes = nnodes();
    std::vector<std::uint64_t> first_task(blocks_.size());
    std::vector<std::uint32_t> start(std::size_t{nodes} + 1, 0);
    std::uint64_t first = 0;
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
        first_task[i] = first;
        first += blocks_[i].ntasks();
        for (std::uint32_t k = 0; k < blocks_[i].nnodes; ++k)
            ++start[blocks_[i].nodeid + k + 1];
    }
    for (std::uint32_t n = 0; n < nodes; ++n)
        start[n + 1] += start[n];
    std::vector<std::uint32_t> covering(start[nodes]);
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::uint32_t i = 0; i < blocks_.size(); ++i)
        for (std::uint32_t k = 0; k < blocks_[i].nnodes; ++k)
            covering[fill[blocks_[i].nodeid + k]++] = i;

    for (std::uint32_t node = 0; node < nodes; ++node) {
        for (std::uint32_t c = start[node]; c < start[node + 1]; ++c) {
            const Block& b = blocks_[covering[c]];
            const std::uint64_t round = std::uint64_t{b.nnodes} * b.ppn;
            std::uint64_t lo = first_task[covering[c]] + std::uint64_t{node - b.nodeid} * b.ppn;
            for (std::uint32_t r = 0; r < b.repeat; ++r, lo += round)
                on_range(lo, lo + b.ppn - 1);
        }
        on_node_end(node);
    }
}

std::string TaskMap::encode_per_node(bool ranges, bool multiline) const {
    const std::uint32_t nodes = nnodes();
    std::string out;
    out.reserve(ntasks_ * (ranges ? 4 : 8) + std::uint64_t{nodes} * (multiline ? 8 : 1));
    RangeWriter writer(out, ranges);
    if (multiline && !blocks_.empty()) {
        append_number(out, 0);
        out += ':';
    }
    bool line_empty = true;
    for_each_node_range(
        [&](std::uint64_t lo, std::uint64_t hi) {
            if (multiline && line_empty)
                out += ' ';
            line_empty = false;
            writer.add(lo, hi);
        },
        [&](NodeId node) {
            writer.finish();
            line_empty = true;
            if (!multiline) {
                if (node + 1 < nodes)
                    out += ';';
                return;
            }
            out += '\n';
            if (node + 1 < nodes) {
                append_number(out, node + 1);
                out += ':';
            }
        });
    return out;
}

std::string TaskMap::to_raw() const {
    return encode_per_node(true, false);
}
std::string TaskMap::to_raw_deranged() const {
    return encode_per_node(false, false);
}
std::string TaskMap::to_multiline() const {
    return encode_per_node(true, true);
}

}  // namespace gantry
