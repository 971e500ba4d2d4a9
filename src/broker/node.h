// A broker of rank 1 and above: it joins its instance's overlay, tells rank
// 0 about its node (host name and topology: broker.join), and runs the
// shells of jobs given its node (NodeExec). It keeps no record and has no
// API socket of its own; it ends when rank 0 shuts the instance down
// (broker.shutdown, passed down the tree first), on SIGTERM or SIGINT, or
// when the way to rank 0 is lost; its shells' tasks end with it.
#pragma once
#include <future>
#include <string>

#include "broker/bootstrap.h"
#include "broker/membership.h"
#include "util/error.h"

namespace gantry::broker {

struct NodeOptions {
    std::string hostname;  // the node's name in the instance's R
    // The node's topology (lstopo XML), wanted only once the broker joins:
    // hwloc may find it meanwhile, off the way to the bootstrap.
    std::shared_future<Result<std::string>> topology_xml;
    // The topology is not this machine's (gantry start --topology): jobs are
    // mapped on it, and their tasks run unbound.
    bool simulated = false;
    std::string shell_program;  // the gantry executable; empty: this one
    MembershipOptions membership;
};

// Runs a broker of rank > 0 until it ends: 0 after an orderly shutdown, 1
// when rank 0 was lost.
Result<int> run_node(Bootstrap bootstrap, NodeOptions options);

}  // namespace gantry::broker
