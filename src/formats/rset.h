// An RFC 20 resource set R: execution targets (ranks), each with its host
// name and the ids of its cores and GPUs, plus properties, a time window and
// the opaque `scheduling` and `attributes` keys.
//
// Held per rank (a std::map from rank to Target, children as IdSets), so that
// lookups and set operations work rank by rank; ranks with identical children
// are grouped again only when R is emitted. Documents of both RFC 20 texts are
// accepted; the current form is emitted.
//
// Rules, messages and the emitted form: docs/formats/R.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/hostlist.h"
#include "formats/idset.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry {

// Why `name` cannot be an RFC 20 property name (empty, not UTF-8, or with
// one of ! & ' " ^ ` | ( )), or nothing when it can.
std::optional<std::string> property_name_problem(std::string_view name);

// The resources of one execution target.
struct Target {
    std::string hostname;  // empty when R names no host for this rank
    IdSet cores;
    IdSet gpus;

    bool empty() const { return cores.empty() && gpus.empty(); }
    // Children in the short form: `core[0-3],gpu0` (empty sets left out).
    std::string children_str() const;
    friend bool operator==(const Target&, const Target&) = default;
};

// How `verify` treats one kind of resource (flux's verify configuration).
enum class VerifyMode {
    kStrict,        // missing resources fail, extra ones are reported
    kAllowExtra,    // missing resources fail, extra ones are fine
    kAllowMissing,  // missing resources are fine, extra ones are reported
    kIgnore,        // neither is checked
};

struct VerifyPolicy {
    VerifyMode core = VerifyMode::kStrict;
    VerifyMode gpu = VerifyMode::kStrict;
    VerifyMode hostname = VerifyMode::kStrict;  // kIgnore skips the host name check

    // `{"default": "allow-extra", "gpu": "ignore", "hostname": "ignore"}`; null is all strict.
    static Result<VerifyPolicy> from_json(const Json& config);
};

// What `verify` found: everything there, more than expected, or something missing.
struct Verification {
    enum class Outcome { kMatch, kExtra, kMissing };
    Outcome outcome = Outcome::kMatch;
    std::string message;  // `rank 1 (foo1) missing resources: gpu0`; empty on kMatch
};

class ResourceSet {
public:
    using Rank = IdSet::Id;
    // More execution targets than this in one R is refused rather than
    // expanded rank by rank (2^20, beyond any machine's node count).
    static constexpr std::uint64_t kMaxRanks = 1u << 20;

    ResourceSet() = default;

    // --- Documents ---------------------------------------------------------
    // One JSON R document; every violation is one message naming its JSON path.
    static Result<ResourceSet> parse(std::string_view text);
    static Result<ResourceSet> from_json(const Json& document);
    // Zero or more concatenated JSON documents (as `gantry R` reads stdin).
    static Result<std::vector<ResourceSet>> parse_all(std::string_view text);

    Json to_json() const;        // the current RFC 20 form, keys sorted
    std::string encode() const;  // compact, keys in RFC order: version, execution, ...
    // `rank[0-3]/core[0-3],gpu0 rank4/core0`: ranks with identical children
    // grouped, groups ordered by their first rank, ranks without children left out.
    std::string short_form() const;

    // --- Building ----------------------------------------------------------
    // Adds `children` to rank `rank` (merging with what the rank holds);
    // fails when a core or GPU is already there or the host name differs.
    Status insert(Rank rank, const Target& children);
    // Names the hosts of all ranks, in ascending rank order.
    Status assign_hosts(const Hostlist& hosts);

    // --- Queries -----------------------------------------------------------
    bool empty() const { return targets_.empty(); }
    const std::map<Rank, Target>& targets() const { return targets_; }
    const Target* find(Rank rank) const;
    IdSet ranks() const;
    std::size_t nnodes() const { return targets_.size(); }
    std::uint64_t ncores() const;
    std::uint64_t ngpus() const;
    // Host names of the ranks that have one, in rank order.
    Hostlist nodelist() const;
    bool has_hostnames() const;  // every rank has a host name (true when empty)
    // The ranks of the hosts in `hosts`; an unknown host is an error. A host
    // named by several ranks gives all of them.
    Result<IdSet> hosts_to_ranks(std::string_view hosts) const;

    // --- Properties (RFC 20 execution.properties) -------------------------
    const std::map<std::string, IdSet>& properties() const { return properties_; }
    IdSet ranks_with_property(std::string_view name) const;
    // Adds `ranks` to property `name`; the name must be legal and the ranks in R.
    Status set_property(std::string_view name, const IdSet& ranks);
    // `NAME` (all ranks) or `NAME:RANKS`, as `gantry R set-property` takes it.
    Status set_property_spec(std::string_view spec);

    // --- Time window and allocation ---------------------------------------
    double starttime() const { return starttime_; }    // 0 is unset
    double expiration() const { return expiration_; }  // 0 is unset
    Status set_window(double starttime, double expiration);
    std::optional<std::int64_t> nslots() const { return nslots_; }

    // --- Opaque keys ---------------------------------------------------------
    const std::optional<Json>& scheduling() const { return scheduling_; }
    const std::optional<Json>& attributes() const { return attributes_; }

    // --- Operations --------------------------------------------------------
    // Operations that change the resources return a new set without
    // `scheduling` and `nslots` (they described the old set); properties are
    // kept for the ranks that remain, and the time window and `attributes`
    // come from this set.

    // Union of disjoint sets: a core or GPU in both is an error.
    Result<ResourceSet> append(const ResourceSet& other) const;
    // Union; overlapping resources are allowed.
    Result<ResourceSet> add(const ResourceSet& other) const;
    ResourceSet diff(const ResourceSet& other) const;       // ranks left empty are dropped
    ResourceSet intersect(const ResourceSet& other) const;  // ranks left empty are dropped
    // For a child instance: ranks become 0..n-1 in order and each rank's cores
    // 0..k-1 in order; GPU ids are kept, since they name devices.
    ResourceSet remap() const;
    // Ranks become each host's index in `hosts`, which must name every host once.
    Result<ResourceSet> rerank(std::string_view hosts) const;

    ResourceSet copy_ranks(const IdSet& ranks) const;
    ResourceSet remove_ranks(const IdSet& ranks) const;
    Result<ResourceSet> copy_hosts(std::string_view hosts) const;
    // Ranks that have every listed property (`^name` negates; a host name
    // counts as a property of its rank).
    Result<ResourceSet> copy_properties(std::span<const std::string> names) const;
    // RFC 31 constraint: `properties`, `hostlist`, `ranks`, `and`, `or`, `not`.
    Result<ResourceSet> copy_constraint(const Json& constraint) const;
    // The ranks that satisfy `constraint`; errors name the operator's place
    // below `path` (`constraint.properties[0]: ...`).
    Result<IdSet> constraint_ranks(const Json& constraint, const std::string& path) const;

    // Does this (expected) set hold at least the resources `actual` reports
    // for each of its ranks? Says which are missing or extra.
    Verification verify(const ResourceSet& actual, const VerifyPolicy& policy = {}) const;

    friend bool operator==(const ResourceSet&, const ResourceSet&) = default;

private:
    ResourceSet derived(std::map<Rank, Target> targets) const;

    std::map<Rank, Target> targets_;
    std::map<std::string, IdSet> properties_;  // name -> ranks
    double starttime_ = 0;
    double expiration_ = 0;
    std::optional<std::int64_t> nslots_;
    std::optional<Json> scheduling_;
    std::optional<Json> attributes_;
};

}  // namespace gantry
