#include "topo/rank_topologies.h"

#include <algorithm>

namespace gantry {
namespace {

constexpr std::string_view kDomain = "topologies";

Error group_error(std::size_t index, const std::string& message) {
    return Error(std::string(kDomain), "[" + std::to_string(index) + "]" + message);
}

}  // namespace

RankTopologies::RankTopologies(const IdSet& ranks, const Topology& topology) {
    assign(ranks, topology);
}

void RankTopologies::assign(const IdSet& ranks, const Topology& topology, bool simulated) {
    if (ranks.empty())
        return;
    for (Group& group : groups_)
        group.ranks -= ranks;
    std::erase_if(groups_, [](const Group& group) { return group.ranks.empty(); });
    // One load is one topology: comparing hwloc handles finds it without
    // comparing whole machines.
    const auto same = std::find_if(groups_.begin(), groups_.end(), [&](const Group& group) {
        return group.topology.handle() == topology.handle() && group.simulated == simulated;
    });
    if (same != groups_.end())
        same->ranks |= ranks;
    else
        groups_.push_back(
            Group{ranks, topology, std::make_shared<std::string>(topology.to_xml()), simulated});
    sort_groups();
}

const Topology* RankTopologies::find(Rank rank) const {
    for (const Group& group : groups_)
        if (group.ranks.contains(rank))
            return &group.topology;
    return nullptr;
}

bool RankTopologies::simulated(Rank rank) const {
    for (const Group& group : groups_)
        if (group.ranks.contains(rank))
            return group.simulated;
    return false;
}

IdSet RankTopologies::ranks() const {
    IdSet all;
    for (const Group& group : groups_)
        all |= group.ranks;
    return all;
}

RankTopologies RankTopologies::only(const IdSet& ranks) const {
    RankTopologies part;
    for (const Group& group : groups_)
        if (IdSet kept = group.ranks & ranks; !kept.empty())
            part.groups_.push_back(
                Group{std::move(kept), group.topology, group.xml, group.simulated});
    part.sort_groups();
    return part;
}

Json RankTopologies::to_json() const {
    Json groups = Json::array();
    for (const Group& group : groups_) {
        Json entry = {{"ranks", group.ranks.encode()}, {"xml", *group.xml}};
        if (group.simulated)
            entry["simulated"] = true;
        groups.push_back(std::move(entry));
    }
    return groups;
}

Result<RankTopologies> RankTopologies::from_json(const Json& groups) {
    if (!groups.is_array())
        return Error(std::string(kDomain), "expected an array, not " + json_type_name(groups));
    RankTopologies topologies;
    IdSet seen;
    for (std::size_t k = 0; k < groups.size(); ++k) {
        const Json& group = groups[k];
        if (!group.is_object() || !group.contains("ranks") || !group["ranks"].is_string() ||
            !group.contains("xml") || !group["xml"].is_string())
            return group_error(k, ": expected {\"ranks\":IDSET,\"xml\":TEXT}");
        auto ranks = IdSet::parse(group["ranks"].get<std::string>());
        if (!ranks)
            return group_error(k, ".ranks: " + ranks.error().str());
        if (ranks->empty())
            return group_error(k, ".ranks: no ranks");
        if (const IdSet twice = *ranks & seen; !twice.empty())
            return group_error(
                k, ".ranks: rank " + std::to_string(*twice.first()) + " is in an earlier group");
        seen |= *ranks;
        const auto simulated = group.find("simulated");
        if (simulated != group.end() && !simulated->is_boolean())
            return group_error(k, ".simulated: expected a boolean");
        auto xml = std::make_shared<std::string>(group["xml"].get<std::string>());
        auto topology = Topology::from_xml_text(*xml);
        if (!topology)
            return group_error(k, ".xml: " + topology.error().str());
        topologies.groups_.push_back(Group{std::move(*ranks), std::move(*topology), xml,
                                           simulated != group.end() && simulated->get<bool>()});
    }
    topologies.sort_groups();
    return topologies;
}

void RankTopologies::sort_groups() {
    std::sort(groups_.begin(), groups_.end(),
              [](const Group& a, const Group& b) { return *a.ranks.first() < *b.ranks.first(); });
}

}  // namespace gantry
