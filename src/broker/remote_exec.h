// The exec service of an instance of many brokers. Rank 0's job manager
// asks it, as it asks the one-broker service (exec_service.h); it starts the
// shell of rank 0's own node as a child, and asks the broker of every other
// rank of R, over the overlay, to start its node's shell:
//
//   rank 0 -> rank r: exec.start {job, R, jobspec, topologies}
//   rank r -> rank 0: replies with "more", one per event, as they come:
//       {"event":"started"}
//       {"event":"output","stream":"stdout"|"stderr"|"message","task":T,DATA}
//                         (DATA as put_data puts it: util/base64.h)
//       {"event":"task-ends","ends":[[T,WAIT_STATUS],...]}  (the ends that
//                         came together, in their order: one message, not
//                         one a task, up the tree)
//       {"event":"exception","message":TEXT}
//       {"event":"pmi"}  (once: the node's tasks speak PMI, so that a node
//                         that fails ends the others, which would wait in
//                         its barrier)
//       {"event":"released"}
//     then the last one: {"event":"finished","status":WAIT_STATUS}
//   rank 0 -> rank r: exec.signal {job, signal}, exec.terminate {job},
//                     exec.stdin {job, DATA, eof: bool}
//
// A PMI barrier of a job that spans nodes goes up the overlay's tree and
// back down it (fence_tree.h): rank 0 merges every node's puts once and
// sends them down, one message per edge each way. A PMIx get of what a task
// of another node put before any fence goes to that node's broker alone
// (direct_modex.h).
//
// The job's events are those of one execution: `started` once every rank's
// shell has started, `released` per rank, `finished` once all have ended.
// A rank lost while its shell runs (its broker died or cannot be reached)
// is an exception of the job ("node-failure"); the other ranks' tasks are
// terminated, and its part ends as killed by SIGKILL.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <asio/io_context.hpp>

#include "broker/broker.h"
#include "broker/direct_modex.h"
#include "broker/exec_service.h"
#include "broker/fence_tree.h"
#include "broker/peers.h"
#include "formats/idset.h"
#include "topo/rank_topologies.h"

namespace gantry::broker {

// The ranks whose brokers can start shells now.
using RanksUp = std::function<IdSet()>;

// At rank 0: shells of rank 0 as its children, those of other ranks through
// `peers`; R may name only ranks in `ranks_up()`. `topologies` are every
// rank's, given to the shells of a job (those of its R).
// PMI barriers go up and down `tree` (fence_tree.h).
std::unique_ptr<ExecService> make_instance_exec_service(asio::io_context& loop,
                                                        std::string shell_program,
                                                        RankTopologies topologies, Broker& broker,
                                                        Peers& peers, const overlay::Tree& tree,
                                                        RanksUp ranks_up);

// At every rank but 0: the exec.* methods, which run this node's shell of a
// job as a child and report its events to rank 0.
class NodeExec {
public:
    NodeExec(asio::io_context& loop, Broker& broker, Peers& peers, const overlay::Tree& tree,
             std::string shell_program);
    ~NodeExec();
    NodeExec(const NodeExec&) = delete;
    NodeExec& operator=(const NodeExec&) = delete;

    // Shells still running here.
    std::size_t running() const { return executions_.size(); }
    // Kills every shell's tasks at once (rank 0 is gone).
    void kill_all();

private:
    struct Running;
    void start(const overlay::Message& request, Responder responder);
    Running* find(const overlay::Message& request, Responder& responder);

    asio::io_context& loop_;
    Broker& broker_;
    Peers& peers_;
    std::string shell_program_;
    std::map<std::uint64_t, std::unique_ptr<Running>> executions_;
    FenceTree fences_;  // after executions_, which its handlers read
    DirectModex modex_;
    // Held by this alone: a modex answer that finds it expired is dropped.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace gantry::broker
