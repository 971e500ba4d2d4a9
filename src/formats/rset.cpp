// RFC 20 R: parsing and validation, emission, the short form, and the
// building, query and property functions of ResourceSet.
#include "formats/rset.h"

#include <cmath>
#include <string>
#include <unordered_map>
#include <utility>

#include "formats/rset_internal.h"
#include "util/text.h"

namespace gantry {

namespace rset_detail {

Error error(std::string message) {
    return Error(std::string(kDomain), std::move(message));
}

Error error_at(const std::string& path, std::string_view message) {
    return error(path + ": " + std::string(message));
}

Error nested(const std::string& path, const Error& inner) {
    std::string message = path.empty() ? inner.message() : path + ": " + inner.message();
    if (inner.input() && inner.offset())
        return Error::at(std::string(kDomain), std::move(message), *inner.input(), *inner.offset());
    if (inner.input())
        return Error::in(std::string(kDomain), std::move(message), *inner.input());
    return error(std::move(message));
}

Error wrong_type(const std::string& path, std::string_view expected, const Json& value) {
    return error_at(path, "expected " + std::string(expected) + ", got " + json_type_name(value));
}

std::string number_str(double value) {
    return to_compact(Json(value));
}

std::string bracketed(const IdSet& ids) {
    return ids.encode({.ranges = true, .brackets = true});
}

bool valid_utf8(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t length = 0;
        std::uint32_t min = 0;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            length = 2, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            length = 3, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            length = 4, min = 0x10000;
        } else {
            return false;
        }
        if (i + length > text.size())
            return false;
        std::uint32_t code = c & (0x7F >> length);
        for (std::size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0) != 0x80)
                return false;
            code = (code << 6) | (next & 0x3F);
        }
        if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
            return false;
        i += length;
    }
    return true;
}

}  // namespace rset_detail

using namespace rset_detail;

std::optional<std::string> property_name_problem(std::string_view name) {
    if (name.empty())
        return "empty property name";
    if (!valid_utf8(name))
        return "property name " + quote(name) + " is not valid UTF-8";
    const auto bad = name.find_first_of(kIllegalPropertyCharacters);
    if (bad != std::string_view::npos)
        return std::string("invalid character '") + name[bad] + "' in property name " + quote(name);
    return std::nullopt;
}

// --- Target ---------------------------------------------------------------

std::string Target::children_str() const {
    std::string out;
    if (!cores.empty())
        out += "core" + bracketed(cores);
    if (!gpus.empty())
        out += (out.empty() ? "gpu" : ",gpu") + bracketed(gpus);
    return out;
}

// --- Parsing --------------------------------------------------------------

namespace {

// Reads the document's parts into a ResourceSet, rank by rank; each function
// names the JSON path of what it reads so that every message says where.
class Reader {
public:
    explicit Reader(std::map<ResourceSet::Rank, Target>& targets) : targets_(targets) {}

    Status read_R_lite(const Json& R_lite) {
        const std::string path = "execution.R_lite";
        if (!R_lite.is_array())
            return wrong_type(path, "an array", R_lite);
        for (std::size_t i = 0; i < R_lite.size(); ++i)
            if (auto status = read_entry(R_lite[i], path + "[" + std::to_string(i) + "]"); !status)
                return status;
        return {};
    }

private:
    static Result<IdSet> read_idset(const Json& value, const std::string& path) {
        if (!value.is_string())
            return wrong_type(path, "an idset string", value);
        auto ids = IdSet::parse(value.get_ref<const std::string&>());
        if (!ids)
            return nested(path, ids.error());
        return ids;
    }

    Status read_entry(const Json& entry, const std::string& path) {
        if (!entry.is_object())
            return wrong_type(path, "an object", entry);
        const auto rank = entry.find("rank");
        if (rank == entry.end())
            return error_at(path, "missing key \"rank\"");
        auto ranks = read_idset(*rank, path + ".rank");
        if (!ranks)
            return ranks.error();
        const auto children = entry.find("children");
        if (children == entry.end())
            return error_at(path, "missing key \"children\"");
        auto target = read_children(*children, path + ".children");
        if (!target)
            return target.error();
        total_ranks_ += ranks->count();
        if (total_ranks_ > ResourceSet::kMaxRanks)
            return error_at(path + ".rank",
                            "more than " + std::to_string(ResourceSet::kMaxRanks) + " ranks in R");
        for (const auto rank_id : *ranks)
            if (auto status = merge(rank_id, *target, path + ".children"); !status)
                return status;
        return {};
    }

    static Result<Target> read_children(const Json& children, const std::string& path) {
        if (!children.is_object())
            return wrong_type(path, "an object", children);
        Target target;
        for (const auto& [name, value] : children.items()) {
            IdSet* ids = name == "core" ? &target.cores : name == "gpu" ? &target.gpus : nullptr;
            if (!ids)
                return error_at(path, "unknown resource " + quote(name) + " (expected core, gpu)");
            auto parsed = read_idset(value, path + "." + name);
            if (!parsed)
                return parsed.error();
            *ids = std::move(*parsed);
        }
        return target;
    }

    // Entries of one rank are merged; a core or GPU given twice is an error,
    // since R_lite entries describe disjoint resources.
    Status merge(ResourceSet::Rank rank, const Target& children, const std::string& path) {
        if (targets_.empty() || rank > targets_.rbegin()->first) {
            targets_.emplace_hint(targets_.end(), rank, children);
            return {};
        }
        auto [it, inserted] = targets_.try_emplace(rank, children);
        if (inserted)
            return {};
        Target& held = it->second;
        const Target both{"", held.cores & children.cores, held.gpus & children.gpus};
        if (!both.empty())
            return error_at(path, "rank " + std::to_string(rank) + " has " + both.children_str() +
                                      " in an earlier R_lite entry");
        held.cores |= children.cores;
        held.gpus |= children.gpus;
        return {};
    }

    std::map<ResourceSet::Rank, Target>& targets_;
    std::uint64_t total_ranks_ = 0;
};

Result<Hostlist> read_nodelist(const Json& nodelist) {
    const std::string path = "execution.nodelist";
    if (!nodelist.is_array())
        return wrong_type(path, "an array of hostlists", nodelist);
    Hostlist hosts;
    for (std::size_t i = 0; i < nodelist.size(); ++i) {
        const std::string entry_path = path + "[" + std::to_string(i) + "]";
        const Json& entry = nodelist[i];
        if (!entry.is_string())
            return wrong_type(entry_path, "a hostlist string", entry);
        auto parsed = Hostlist::parse(entry.get_ref<const std::string&>());
        if (!parsed)
            return nested(entry_path, parsed.error());
        hosts.append(*parsed);
        if (hosts.count() > ResourceSet::kMaxRanks)
            return error_at(path, "more than " + std::to_string(ResourceSet::kMaxRanks) + " hosts");
    }
    return hosts;
}

Result<double> read_time(const Json& execution, const char* key) {
    const auto it = execution.find(key);
    if (it == execution.end())
        return 0.0;
    const std::string path = std::string("execution.") + key;
    if (!it->is_number())
        return wrong_type(path, "a number", *it);
    const double value = it->get<double>();
    if (!std::isfinite(value) || value < 0)
        return error_at(path,
                        "must be a time in seconds since the epoch, got " + number_str(value));
    return value;
}

Result<std::optional<std::int64_t>> read_nslots(const Json& execution) {
    const auto it = execution.find("nslots");
    if (it == execution.end())
        return std::optional<std::int64_t>{};
    const std::string path = "execution.nslots";
    if (!it->is_number_integer())
        return wrong_type(path, "an integer", *it);
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX)
        return error_at(path, "too large: " + to_compact(*it));
    const auto nslots = it->get<std::int64_t>();
    if (nslots <= 0)
        return error_at(path, "must be greater than 0, got " + std::to_string(nslots));
    return std::optional<std::int64_t>(nslots);
}

}  // namespace

Result<ResourceSet> ResourceSet::from_json(const Json& document) {
    if (!document.is_object())
        return error("expected an R document (a JSON object), got " + json_type_name(document));
    const auto version = document.find("version");
    if (version == document.end())
        return error("missing key \"version\"");
    if (!version->is_number_integer())
        return wrong_type("version", "an integer", *version);
    if (*version != 1)
        return error_at("version", "unsupported version " + to_compact(*version) + " (expected 1)");

    ResourceSet set;
    if (const auto it = document.find("scheduling"); it != document.end())
        set.scheduling_ = *it;
    if (const auto it = document.find("attributes"); it != document.end())
        set.attributes_ = *it;

    const auto execution = document.find("execution");
    if (execution == document.end()) {
        // The earlier RFC 20 text allows an R with only `scheduling`: it
        // names no execution target that gantry could use, so it is empty.
        if (set.scheduling_)
            return set;
        return error("missing key \"execution\"");
    }
    if (!execution->is_object())
        return wrong_type("execution", "an object", *execution);
    const auto R_lite = execution->find("R_lite");
    if (R_lite == execution->end())
        return error_at("execution", "missing key \"R_lite\"");
    Reader reader(set.targets_);
    if (auto status = reader.read_R_lite(*R_lite); !status)
        return status.error();

    if (const auto nodelist = execution->find("nodelist"); nodelist != execution->end()) {
        auto hosts = read_nodelist(*nodelist);
        if (!hosts)
            return hosts.error();
        if (hosts->count() != set.nnodes())
            return error_at("execution.nodelist", counted(hosts->count(), "host") + " for " +
                                                      counted(set.nnodes(), "rank"));
        (void)set.assign_hosts(*hosts);
    }

    if (const auto properties = execution->find("properties"); properties != execution->end()) {
        const std::string path = "execution.properties";
        if (!properties->is_object())
            return wrong_type(path, "an object", *properties);
        const IdSet all = set.ranks();
        for (const auto& [name, value] : properties->items()) {
            if (const auto problem = property_name_problem(name))
                return error_at(path, *problem);
            const std::string value_path = path + "." + name;
            if (!value.is_string())
                return wrong_type(value_path, "an idset string", value);
            auto ranks = IdSet::parse(value.get_ref<const std::string&>());
            if (!ranks)
                return nested(value_path, ranks.error());
            if (const IdSet unknown = *ranks - all; !unknown.empty())
                return error_at(value_path, "ranks " + unknown.encode() + " not in R");
            if (!ranks->empty())
                set.properties_[name] |= *ranks;
        }
    }

    auto starttime = read_time(*execution, "starttime");
    if (!starttime)
        return starttime.error();
    auto expiration = read_time(*execution, "expiration");
    if (!expiration)
        return expiration.error();
    if (*starttime > 0 && *expiration > 0 && *expiration <= *starttime)
        return error_at(
            "execution.expiration",
            number_str(*expiration) + " is not after starttime " + number_str(*starttime));
    set.starttime_ = *starttime;
    set.expiration_ = *expiration;
    auto nslots = read_nslots(*execution);
    if (!nslots)
        return nslots.error();
    set.nslots_ = *nslots;
    return set;
}

Result<ResourceSet> ResourceSet::parse(std::string_view text) {
    auto document = parse_json(kDomain, text);
    if (!document)
        return document.error();
    return from_json(*document);
}

namespace {

// Where the JSON value that starts at `begin` ends: after its closing bracket
// or quote, or at the next space or bracket for a bare word. The value is
// parsed afterwards, so a broken one only needs to end somewhere.
std::size_t value_end(std::string_view text, std::size_t begin) {
    const char first = text[begin];
    if (first != '{' && first != '[' && first != '"') {
        std::size_t end = begin + 1;
        while (end < text.size() && !is_json_space(text[end]) &&
               std::string_view("{}[]\"").find(text[end]) == std::string_view::npos)
            ++end;
        return end;
    }
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = begin; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"') {
                in_string = false;
                if (depth == 0)
                    return i + 1;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth <= 0)
                return i + 1;
        }
    }
    return text.size();
}

}  // namespace

Result<std::vector<ResourceSet>> ResourceSet::parse_all(std::string_view text) {
    std::vector<ResourceSet> sets;
    std::size_t pos = 0;
    while (true) {
        while (pos < text.size() && is_json_space(text[pos]))
            ++pos;
        if (pos == text.size())
            return sets;
        const std::size_t end = value_end(text, pos);
        auto set = parse(text.substr(pos, end - pos));
        if (!set) {
            if (sets.empty())
                return set.error();
            return nested("document " + std::to_string(sets.size() + 1), set.error());
        }
        sets.push_back(std::move(*set));
        pos = end;
    }
}

// --- Emission -------------------------------------------------------------

namespace rset_detail {

std::vector<Group> group_by_children(const std::map<ResourceSet::Rank, Target>& targets) {
    std::vector<Group> groups;
    std::unordered_map<std::string, std::size_t> index;
    std::size_t last = 0;
    for (const auto& [rank, target] : targets) {
        // Neighbouring ranks usually have the same children: compare with the
        // last group before building a key.
        if (!groups.empty() && groups[last].children->cores == target.cores &&
            groups[last].children->gpus == target.gpus) {
            groups[last].ranks.insert(rank);
            continue;
        }
        const std::string key = target.cores.encode() + "/" + target.gpus.encode();
        const auto [it, inserted] = index.try_emplace(key, groups.size());
        if (inserted)
            groups.push_back({IdSet{}, &target});
        last = it->second;
        groups[last].ranks.insert(rank);
    }
    return groups;
}

}  // namespace rset_detail

namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson R_lite_json(const std::map<ResourceSet::Rank, Target>& targets) {
    OrderedJson R_lite = OrderedJson::array();
    for (const auto& group : group_by_children(targets)) {
        OrderedJson children = OrderedJson::object();
        children["core"] = group.children->cores.encode();
        if (!group.children->gpus.empty())
            children["gpu"] = group.children->gpus.encode();
        R_lite.push_back(OrderedJson{{"rank", group.ranks.encode()}, {"children", children}});
    }
    return R_lite;
}

}  // namespace

namespace {

OrderedJson document_json(const ResourceSet& set) {
    OrderedJson execution = OrderedJson::object();
    execution["R_lite"] = R_lite_json(set.targets());
    if (set.has_hostnames())
        execution["nodelist"] = OrderedJson::array({set.nodelist().encode()});
    if (!set.properties().empty()) {
        OrderedJson properties = OrderedJson::object();
        for (const auto& [name, ranks] : set.properties())
            properties[name] = ranks.encode();
        execution["properties"] = properties;
    }
    execution["starttime"] = set.starttime();
    execution["expiration"] = set.expiration();
    if (set.nslots())
        execution["nslots"] = *set.nslots();
    OrderedJson document = OrderedJson::object();
    document["version"] = 1;
    document["execution"] = execution;
    if (set.scheduling())
        document["scheduling"] = OrderedJson(*set.scheduling());
    if (set.attributes())
        document["attributes"] = OrderedJson(*set.attributes());
    return document;
}

}  // namespace

Json ResourceSet::to_json() const {
    return Json(document_json(*this));
}

std::string ResourceSet::encode() const {
    return document_json(*this).dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

std::string ResourceSet::short_form() const {
    std::string out;
    for (const auto& group : group_by_children(targets_)) {
        if (group.children->empty())
            continue;
        if (!out.empty())
            out += ' ';
        out += "rank" + bracketed(group.ranks) + "/" + group.children->children_str();
    }
    return out;
}

// --- Building -------------------------------------------------------------

Status ResourceSet::insert(Rank rank, const Target& children) {
    if (rank > IdSet::kMaxId)
        return error("rank " + std::to_string(rank) + " is larger than " +
                     std::to_string(IdSet::kMaxId));
    const auto it = targets_.find(rank);
    if (it == targets_.end()) {
        if (targets_.size() >= kMaxRanks)
            return error("more than " + std::to_string(kMaxRanks) + " ranks in R");
        targets_.emplace(rank, children);
        return {};
    }
    Target& held = it->second;
    if (!children.hostname.empty() && !held.hostname.empty() && children.hostname != held.hostname)
        return error("rank " + std::to_string(rank) + " is host " + held.hostname + ", not " +
                     children.hostname);
    const Target both{"", held.cores & children.cores, held.gpus & children.gpus};
    if (!both.empty())
        return error("rank " + std::to_string(rank) + " already has " + both.children_str());
    if (held.hostname.empty())
        held.hostname = children.hostname;
    held.cores |= children.cores;
    held.gpus |= children.gpus;
    return {};
}

Status ResourceSet::assign_hosts(const Hostlist& hosts) {
    if (hosts.count() != targets_.size())
        return error("nodelist has " + counted(hosts.count(), "host") + " for " +
                     counted(targets_.size(), "rank"));
    auto names = hosts.expand();
    std::size_t i = 0;
    for (auto& [rank, target] : targets_)
        target.hostname = std::move(names[i++]);
    return {};
}

// --- Queries --------------------------------------------------------------

const Target* ResourceSet::find(Rank rank) const {
    const auto it = targets_.find(rank);
    return it == targets_.end() ? nullptr : &it->second;
}

IdSet ResourceSet::ranks() const {
    IdSet ranks;
    for (const auto& [rank, target] : targets_)
        ranks.insert(rank);
    return ranks;
}

std::uint64_t ResourceSet::ncores() const {
    std::uint64_t count = 0;
    for (const auto& [rank, target] : targets_)
        count += target.cores.count();
    return count;
}

std::uint64_t ResourceSet::ngpus() const {
    std::uint64_t count = 0;
    for (const auto& [rank, target] : targets_)
        count += target.gpus.count();
    return count;
}

Hostlist ResourceSet::nodelist() const {
    std::vector<std::string> hosts;
    hosts.reserve(targets_.size());
    for (const auto& [rank, target] : targets_)
        if (!target.hostname.empty())
            hosts.push_back(target.hostname);
    return Hostlist::from_hosts(hosts);
}

bool ResourceSet::has_hostnames() const {
    for (const auto& [rank, target] : targets_)
        if (target.hostname.empty())
            return false;
    return true;
}

Result<IdSet> ResourceSet::hosts_to_ranks(std::string_view hosts) const {
    auto wanted = Hostlist::parse(hosts);
    if (!wanted)
        return wanted.error();
    std::unordered_map<std::string_view, IdSet> ranks_of_host;
    for (const auto& [rank, target] : targets_)
        if (!target.hostname.empty())
            ranks_of_host[target.hostname].insert(rank);
    IdSet ranks;
    std::vector<std::string> unknown;
    for (const auto& host : wanted->expand()) {
        const auto it = ranks_of_host.find(host);
        if (it == ranks_of_host.end())
            unknown.push_back(host);
        else
            ranks |= it->second;
    }
    if (!unknown.empty())
        return error("hosts not in R: " + Hostlist::from_hosts(unknown).encode());
    return ranks;
}

// --- Properties -----------------------------------------------------------

IdSet ResourceSet::ranks_with_property(std::string_view name) const {
    const auto it = properties_.find(std::string(name));
    return it == properties_.end() ? IdSet{} : it->second;
}

Status ResourceSet::set_property(std::string_view name, const IdSet& ranks) {
    if (const auto problem = property_name_problem(name))
        return error(*problem);
    if (const IdSet unknown = ranks - this->ranks(); !unknown.empty())
        return error("property " + quote(name) + ": ranks " + unknown.encode() + " not in R");
    if (!ranks.empty())
        properties_[std::string(name)] |= ranks;
    return {};
}

Status ResourceSet::set_property_spec(std::string_view spec) {
    const auto colon = spec.find(':');
    const std::string_view name = spec.substr(0, colon);
    if (colon == std::string_view::npos)
        return set_property(name, ranks());
    auto ranks = IdSet::parse(spec.substr(colon + 1));
    if (!ranks)
        return nested("property " + quote(name), ranks.error());
    return set_property(name, *ranks);
}

// --- Time window ----------------------------------------------------------

Status ResourceSet::set_window(double starttime, double expiration) {
    if (!std::isfinite(starttime) || starttime < 0)
        return error("starttime must be a time in seconds since the epoch, got " +
                     number_str(starttime));
    if (!std::isfinite(expiration) || expiration < 0)
        return error("expiration must be a time in seconds since the epoch, got " +
                     number_str(expiration));
    if (starttime > 0 && expiration > 0 && expiration <= starttime)
        return error("expiration " + number_str(expiration) + " is not after starttime " +
                     number_str(starttime));
    starttime_ = starttime;
    expiration_ = expiration;
    return {};
}

}  // namespace gantry
