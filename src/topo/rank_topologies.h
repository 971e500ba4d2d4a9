// Each rank's topology in an instance: what its broker keeps of its nodes,
// and what it hands a job's shell so that every shell maps the job on the
// same nodes as the broker did. Ranks of one topology share a group: one
// hwloc load, and one XML document when sent
// (`[{"ranks":"0-3","xml":"<lstopo XML>"}]`), so that a thousand identical
// nodes cost what one does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/idset.h"
#include "topo/topology.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry {

class RankTopologies {
public:
    using Rank = IdSet::Id;
    struct Group {
        IdSet ranks;
        Topology topology;
        // topology.to_xml(), made once per group: a job's header sends it.
        std::shared_ptr<const std::string> xml;
        // A node simulated with more cores than the machine has (R names
        // them): jobs are mapped on `topology`, and their tasks there run
        // unbound, as Flux's noverify does.
        bool simulated = false;
    };

    RankTopologies() = default;
    // Every rank of `ranks` has `topology`.
    RankTopologies(const IdSet& ranks, const Topology& topology);

    // Gives `ranks` `topology`, taking them from the groups they were in.
    // Ranks given copies of one Topology (one load) share a group.
    void assign(const IdSet& ranks, const Topology& topology, bool simulated = false);

    // The topology of `rank`; none when the rank has none.
    const Topology* find(Rank rank) const;
    // Whether `rank`'s node is simulated (Group::simulated).
    bool simulated(Rank rank) const;
    IdSet ranks() const;
    bool empty() const { return groups_.empty(); }
    // In order of their first rank.
    const std::vector<Group>& groups() const { return groups_; }
    // Only `ranks` of these (a job's R among an instance's): groups left
    // without ranks are dropped.
    RankTopologies only(const IdSet& ranks) const;

    // [{"ranks":IDSET,"xml":TEXT}...], in the order of groups(); a
    // simulated group has "simulated":true too.
    Json to_json() const;
    // What to_json() gives; each XML is loaded once. Errors name the group:
    // `topologies: [1].ranks: rank 2 is in an earlier group`.
    static Result<RankTopologies> from_json(const Json& groups);

private:
    void sort_groups();
    std::vector<Group> groups_;
};

}  // namespace gantry
