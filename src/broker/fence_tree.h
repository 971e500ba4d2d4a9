// The PMI barrier of a job that spans nodes, gathered up the overlay's tree
// and completed down it (one message per edge each way, as hydra's proxies
// and Flux's brokers do): each broker merges the puts of its own node's
// shell, when the job runs there, with what its children send for their
// subtrees, and sends its parent one exec.fence-in once every rank of the
// job below it has come in; rank 0, which then has every node's puts, sends
// them down, one exec.fence-out to each child whose subtree runs part of
// the job, which each passes on:
//
//   exec.fence-in  {job, ranks: IDSET (the job's R), count: N, puts: BASE64}
//   exec.fence-out {job, ranks: IDSET, puts: BASE64}
//
// A broker keeps nothing of a job between barriers; a barrier a lost node
// never joins is not completed (the job fails with the node), and what was
// gathered for it is forgotten with the job (forget()).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "broker/peers.h"
#include "formats/idset.h"
#include "overlay/tree.h"

namespace gantry::broker {

// How many of `ranks` are in the subtree of `self` (itself included).
std::uint32_t ranks_below(const overlay::Tree& tree, overlay::Rank self, const IdSet& ranks);
// The children of `self` whose subtrees hold some of `ranks`, ascending.
std::vector<overlay::Rank> children_toward(const overlay::Tree& tree, overlay::Rank self,
                                           const IdSet& ranks);

class FenceTree {
public:
    // Rank 0: every node's puts of `job`'s barrier, concatenated.
    using Complete = std::function<void(std::uint64_t job, std::string puts)>;
    // This node's shell of `job` gets the barrier's merged puts.
    using Deliver = std::function<void(std::uint64_t job, const std::string& merged)>;

    // Registers exec.fence-in and exec.fence-out on `broker` (every rank).
    FenceTree(Broker& broker, Peers& peers, const overlay::Tree& tree, Deliver deliver,
              Complete complete = nullptr);
    FenceTree(const FenceTree&) = delete;
    FenceTree& operator=(const FenceTree&) = delete;

    // This node's shell of `job`, whose R has `ranks`, is in a barrier with
    // `puts` (KEY=VALUE lines).
    void contribute(std::uint64_t job, const IdSet& ranks, const std::string& puts);
    // Rank 0: sends `merged` down to the children whose subtrees run part
    // of `job` (its own node's shell is the caller's to complete).
    void broadcast(std::uint64_t job, const IdSet& ranks, const std::string& merged);
    // `job` has ended here: what was gathered for it goes.
    void forget(std::uint64_t job) { gathering_.erase(job); }

private:
    struct Gathering {
        std::uint32_t expected = 0;
        std::uint32_t count = 0;
        std::string puts;
    };
    void gathered(std::uint64_t job, const IdSet& ranks, std::uint32_t count, std::string puts);

    Broker& broker_;
    Peers& peers_;
    overlay::Tree tree_;
    Deliver deliver_;
    Complete complete_;
    std::map<std::uint64_t, Gathering> gathering_;
};

}  // namespace gantry::broker
