// RFC 20 R: set operations, renumbering, selection and verification.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "formats/rset.h"
#include "formats/rset_internal.h"
#include "util/text.h"

namespace gantry {

using namespace rset_detail;

namespace {

IdSet ranks_of(const std::map<ResourceSet::Rank, Target>& targets) {
    IdSet ranks;
    for (const auto& [rank, target] : targets)
        ranks.insert(rank);
    return ranks;
}

// The properties of `properties` restricted to `ranks`, empty ones dropped.
std::map<std::string, IdSet> restrict_properties(const std::map<std::string, IdSet>& properties,
                                                 const IdSet& ranks) {
    std::map<std::string, IdSet> kept;
    for (const auto& [name, members] : properties)
        if (IdSet left = members & ranks; !left.empty())
            kept.emplace(name, std::move(left));
    return kept;
}

Error host_conflict(ResourceSet::Rank rank, const Target& a, const Target& b) {
    return error("rank " + std::to_string(rank) + " is host " + a.hostname + " in one set and " +
                 b.hostname + " in the other");
}

// Property ranks carried through a renumbering old rank -> new rank.
std::map<std::string, IdSet> renumber_properties(
    const std::map<std::string, IdSet>& properties,
    const std::unordered_map<ResourceSet::Rank, ResourceSet::Rank>& new_rank) {
    std::map<std::string, IdSet> renumbered;
    for (const auto& [name, members] : properties) {
        IdSet ranks;
        for (const auto old_rank : members)
            ranks.insert(new_rank.at(old_rank));
        renumbered.emplace(name, std::move(ranks));
    }
    return renumbered;
}

}  // namespace

ResourceSet ResourceSet::derived(std::map<Rank, Target> targets) const {
    ResourceSet set;
    set.properties_ = restrict_properties(properties_, ranks_of(targets));
    set.targets_ = std::move(targets);
    set.starttime_ = starttime_;
    set.expiration_ = expiration_;
    set.attributes_ = attributes_;
    return set;
}

// --- Union, difference, intersection --------------------------------------

namespace {

// Union of `b` into `targets`; with `disjoint`, a resource in both is an error.
Status merge_into(std::map<ResourceSet::Rank, Target>& targets,
                  const std::map<ResourceSet::Rank, Target>& b, bool disjoint) {
    for (const auto& [rank, theirs] : b) {
        auto [it, inserted] = targets.try_emplace(rank, theirs);
        if (inserted)
            continue;
        Target& ours = it->second;
        if (!ours.hostname.empty() && !theirs.hostname.empty() && ours.hostname != theirs.hostname)
            return host_conflict(rank, ours, theirs);
        if (disjoint) {
            const Target both{"", ours.cores & theirs.cores, ours.gpus & theirs.gpus};
            if (!both.empty())
                return error("append: rank " + std::to_string(rank) + " has " +
                             both.children_str() + " in both sets");
        }
        if (ours.hostname.empty())
            ours.hostname = theirs.hostname;
        ours.cores |= theirs.cores;
        ours.gpus |= theirs.gpus;
    }
    return {};
}

}  // namespace

Result<ResourceSet> ResourceSet::append(const ResourceSet& other) const {
    auto targets = targets_;
    if (auto status = merge_into(targets, other.targets_, true); !status)
        return status.error();
    ResourceSet set = derived(std::move(targets));
    for (const auto& [name, members] : other.properties_)
        set.properties_[name] |= members;
    return set;
}

Result<ResourceSet> ResourceSet::add(const ResourceSet& other) const {
    auto targets = targets_;
    if (auto status = merge_into(targets, other.targets_, false); !status)
        return status.error();
    ResourceSet set = derived(std::move(targets));
    for (const auto& [name, members] : other.properties_)
        set.properties_[name] |= members;
    return set;
}

ResourceSet ResourceSet::diff(const ResourceSet& other) const {
    std::map<Rank, Target> targets;
    for (const auto& [rank, ours] : targets_) {
        const Target* theirs = other.find(rank);
        if (!theirs) {
            targets.emplace_hint(targets.end(), rank, ours);
            continue;
        }
        Target left{ours.hostname, ours.cores - theirs->cores, ours.gpus - theirs->gpus};
        if (!left.empty())
            targets.emplace_hint(targets.end(), rank, std::move(left));
    }
    return derived(std::move(targets));
}

ResourceSet ResourceSet::intersect(const ResourceSet& other) const {
    std::map<Rank, Target> targets;
    for (const auto& [rank, ours] : targets_) {
        const Target* theirs = other.find(rank);
        if (!theirs)
            continue;
        Target both{ours.hostname.empty() ? theirs->hostname : ours.hostname,
                    ours.cores & theirs->cores, ours.gpus & theirs->gpus};
        if (!both.empty())
            targets.emplace_hint(targets.end(), rank, std::move(both));
    }
    return derived(std::move(targets));
}

// --- Renumbering ----------------------------------------------------------

ResourceSet ResourceSet::remap() const {
    std::map<Rank, Target> targets;
    std::unordered_map<Rank, Rank> new_rank;
    Rank next = 0;
    for (const auto& [rank, target] : targets_) {
        // A child instance sees only its own cores, numbered from 0 in order.
        const auto ncores = target.cores.count();
        Target renumbered{target.hostname,
                          ncores == 0 ? IdSet{} : IdSet::range(0, static_cast<Rank>(ncores - 1)),
                          target.gpus};
        new_rank.emplace(rank, next);
        targets.emplace_hint(targets.end(), next++, std::move(renumbered));
    }
    ResourceSet set = derived(std::move(targets));
    set.properties_ = renumber_properties(properties_, new_rank);
    return set;
}

Result<ResourceSet> ResourceSet::rerank(std::string_view hosts) const {
    auto order = Hostlist::parse(hosts);
    if (!order)
        return order.error();
    if (order->count() != targets_.size())
        return error("rerank: " + counted(order->count(), "host") + " given for " +
                     counted(targets_.size(), "rank"));
    // A host name may belong to several ranks; each mention takes the next one.
    std::unordered_map<std::string_view, std::vector<Rank>> ranks_of_host;
    for (auto it = targets_.rbegin(); it != targets_.rend(); ++it)
        if (!it->second.hostname.empty())
            ranks_of_host[it->second.hostname].push_back(it->first);
    std::map<Rank, Target> targets;
    std::unordered_map<Rank, Rank> new_rank;
    Rank next = 0;
    for (const auto& host : order->expand()) {
        const auto it = ranks_of_host.find(host);
        if (it == ranks_of_host.end())
            return error("rerank: host " + host + " not in R");
        if (it->second.empty())
            return error("rerank: host " + host + " given more often than R holds it");
        const Rank old_rank = it->second.back();
        it->second.pop_back();
        new_rank.emplace(old_rank, next);
        targets.emplace_hint(targets.end(), next++, targets_.at(old_rank));
    }
    ResourceSet set = derived(std::move(targets));
    set.properties_ = renumber_properties(properties_, new_rank);
    return set;
}

// --- Selection ------------------------------------------------------------

ResourceSet ResourceSet::copy_ranks(const IdSet& ranks) const {
    std::map<Rank, Target> targets;
    for (const auto& [rank, target] : targets_)
        if (ranks.contains(rank))
            targets.emplace_hint(targets.end(), rank, target);
    return derived(std::move(targets));
}

ResourceSet ResourceSet::remove_ranks(const IdSet& ranks) const {
    std::map<Rank, Target> targets;
    for (const auto& [rank, target] : targets_)
        if (!ranks.contains(rank))
            targets.emplace_hint(targets.end(), rank, target);
    return derived(std::move(targets));
}

Result<ResourceSet> ResourceSet::copy_hosts(std::string_view hosts) const {
    auto ranks = hosts_to_ranks(hosts);
    if (!ranks)
        return ranks.error();
    return copy_ranks(*ranks);
}

namespace {

IdSet ranks_of_hostname(const ResourceSet& set, std::string_view host) {
    IdSet ranks;
    for (const auto& [rank, target] : set.targets())
        if (target.hostname == host)
            ranks.insert(rank);
    return ranks;
}

// Ranks that have property `name`, a host name counting as a property.
IdSet ranks_named(const ResourceSet& set, std::string_view name) {
    return set.ranks_with_property(name) | ranks_of_hostname(set, name);
}

Result<IdSet> ranks_with_all(const ResourceSet& set, std::span<const std::string> names,
                             const std::string& path) {
    const IdSet all = set.ranks();
    IdSet ranks = all;
    for (const auto& spec : names) {
        const bool negate = spec.starts_with('^');
        const std::string_view name = std::string_view(spec).substr(negate ? 1 : 0);
        if (const auto problem = property_name_problem(name))
            return path.empty() ? error(*problem) : error_at(path, *problem);
        const IdSet named = ranks_named(set, name);
        ranks &= negate ? all - named : named;
    }
    return ranks;
}

}  // namespace

Result<ResourceSet> ResourceSet::copy_properties(std::span<const std::string> names) const {
    auto ranks = ranks_with_all(*this, names, "");
    if (!ranks)
        return ranks.error();
    return copy_ranks(*ranks);
}

Result<IdSet> ResourceSet::constraint_ranks(const Json& constraint, const std::string& path) const {
    if (!constraint.is_object())
        return wrong_type(path, "an object", constraint);
    const IdSet all = ranks();
    IdSet ranks = all;  // the operators of one object must all hold
    for (const auto& [op, operand] : constraint.items()) {
        const std::string op_path = path + "." + op;
        if (!operand.is_array())
            return wrong_type(op_path, "an array", operand);
        std::vector<std::string> words;
        std::vector<IdSet> parts;
        for (std::size_t i = 0; i < operand.size(); ++i) {
            const std::string item_path = op_path + "[" + std::to_string(i) + "]";
            const Json& item = operand[i];
            if (op == "and" || op == "or" || op == "not") {
                auto part = constraint_ranks(item, item_path);
                if (!part)
                    return part.error();
                parts.push_back(std::move(*part));
            } else if (!item.is_string()) {
                return wrong_type(item_path, "a string", item);
            } else {
                words.push_back(item.get<std::string>());
            }
        }
        IdSet matched;
        if (op == "properties") {
            auto named = ranks_with_all(*this, words, op_path);
            if (!named)
                return named.error();
            matched = std::move(*named);
        } else if (op == "hostlist") {
            // Each rank's host looked up in the lists, never the lists
            // expanded: a short one may name millions of hosts.
            std::vector<Hostlist> lists;
            for (std::size_t i = 0; i < words.size(); ++i) {
                auto hosts = Hostlist::parse(words[i]);
                if (!hosts)
                    return nested(op_path + "[" + std::to_string(i) + "]", hosts.error());
                lists.push_back(std::move(*hosts));
            }
            for (const auto& [rank, target] : targets_) {
                const std::string& host = target.hostname;
                if (std::any_of(lists.begin(), lists.end(), [&host](const Hostlist& hosts) {
                        return hosts.find(host).has_value();
                    }))
                    matched.insert(rank);
            }
        } else if (op == "ranks") {
            for (std::size_t i = 0; i < words.size(); ++i) {
                auto ids = IdSet::parse(words[i]);
                if (!ids)
                    return nested(op_path + "[" + std::to_string(i) + "]", ids.error());
                matched |= *ids & all;
            }
        } else if (op == "and" || op == "not") {
            matched = all;
            for (const auto& part : parts)
                matched &= part;
            if (op == "not")
                matched = all - matched;
        } else if (op == "or") {
            for (const auto& part : parts)
                matched |= part;
        } else {
            return error_at(path, "unknown constraint operator " + quote(op));
        }
        ranks &= matched;
    }
    return ranks;
}

Result<ResourceSet> ResourceSet::copy_constraint(const Json& constraint) const {
    auto ranks = constraint_ranks(constraint, "constraint");
    if (!ranks)
        return ranks.error();
    return copy_ranks(*ranks);
}

// --- Verification ---------------------------------------------------------

namespace {

Result<VerifyMode> verify_mode(const Json& value, const std::string& path) {
    if (!value.is_string())
        return wrong_type(path, "a string", value);
    const auto& name = value.get_ref<const std::string&>();
    if (name == "strict")
        return VerifyMode::kStrict;
    if (name == "allow-extra")
        return VerifyMode::kAllowExtra;
    if (name == "allow-missing")
        return VerifyMode::kAllowMissing;
    if (name == "ignore")
        return VerifyMode::kIgnore;
    return error_at(path, "unknown mode " + quote(name) +
                              " (expected strict, allow-extra, allow-missing or ignore)");
}

bool checks_missing(VerifyMode mode) {
    return mode == VerifyMode::kStrict || mode == VerifyMode::kAllowExtra;
}

bool checks_extra(VerifyMode mode) {
    return mode == VerifyMode::kStrict || mode == VerifyMode::kAllowMissing;
}

// What `verify` says of one rank of the actual set.
Verification verify_rank(ResourceSet::Rank rank, const Target* expected, const Target& actual,
                         const VerifyPolicy& policy) {
    const std::string name = "rank " + std::to_string(rank);
    const std::string host = actual.hostname.empty() ? "unknown" : actual.hostname;
    using Outcome = Verification::Outcome;
    if (!expected)
        return {Outcome::kMissing, name + " not found in expected ranks"};
    if (policy.hostname != VerifyMode::kIgnore && !expected->hostname.empty() &&
        !actual.hostname.empty() && expected->hostname != actual.hostname)
        return {Outcome::kMissing, name + " got hostname '" + actual.hostname + "', expected '" +
                                       expected->hostname + "'"};
    Target missing;
    if (checks_missing(policy.core))
        missing.cores = expected->cores - actual.cores;
    if (checks_missing(policy.gpu))
        missing.gpus = expected->gpus - actual.gpus;
    if (!missing.empty())
        return {Outcome::kMissing,
                name + " (" + host + ") missing resources: " + missing.children_str()};
    Target extra;
    if (checks_extra(policy.core))
        extra.cores = actual.cores - expected->cores;
    if (checks_extra(policy.gpu))
        extra.gpus = actual.gpus - expected->gpus;
    if (!extra.empty())
        return {Outcome::kExtra,
                name + " (" + host + ") has extra resources: " + extra.children_str()};
    return {};
}

}  // namespace

Result<VerifyPolicy> VerifyPolicy::from_json(const Json& config) {
    VerifyPolicy policy;
    if (config.is_null())
        return policy;
    const std::string path = "verify config";
    if (!config.is_object())
        return wrong_type(path, "an object", config);
    if (const auto it = config.find("default"); it != config.end()) {
        auto mode = verify_mode(*it, path + ".default");
        if (!mode)
            return mode.error();
        policy.core = policy.gpu = policy.hostname = *mode;
    }
    for (const auto& [key, value] : config.items()) {
        VerifyMode* target = key == "core"       ? &policy.core
                             : key == "gpu"      ? &policy.gpu
                             : key == "hostname" ? &policy.hostname
                                                 : nullptr;
        if (key == "default")
            continue;
        if (!target)
            return error_at(path, "unknown resource " + quote(key) +
                                      " (expected default, core, gpu or hostname)");
        auto mode = verify_mode(value, path + "." + key);
        if (!mode)
            return mode.error();
        *target = *mode;
    }
    return policy;
}

Verification ResourceSet::verify(const ResourceSet& actual, const VerifyPolicy& policy) const {
    Verification verdict;
    for (const auto& [rank, target] : actual.targets_) {
        const Verification one = verify_rank(rank, find(rank), target, policy);
        if (one.outcome == Verification::Outcome::kMatch)
            continue;
        if (one.outcome > verdict.outcome)
            verdict.outcome = one.outcome;
        verdict.message += (verdict.message.empty() ? "" : "; ") + one.message;
    }
    return verdict;
}

}  // namespace gantry
