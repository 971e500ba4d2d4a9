// PMIx direct modex across the nodes of an instance: a task's get of a key
// that a task of another node put, before any fence carried it. The asking
// node's shell names the task and its node (ExecEvents::modex); its broker
// asks the broker of that node's rank, whose shell asks its PMIx server for
// the task's data once the task has committed it:
//
//   exec.modex {job, task, key}  ->  {data: BASE64} once the task has put
//                                    the key (any: ""), or an error when it
//                                    never will (it ended, or its shell did)
//
// One request and one reply, routed through the overlay like any call to a
// rank; a rank lost first ends the call with an error, so a get never
// waits for a node that is gone. A request that comes before the job's
// shell has started here (the asking node's shell started first) waits for
// it, at most kShellWait; one that comes after it has ended is answered
// with an error at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <set>
#include <string>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "broker/broker.h"
#include "broker/exec_service.h"
#include "broker/peers.h"

namespace gantry::broker {

class DirectModex {
public:
    // This broker's shell of `job`, if one runs here.
    using FindShell = std::function<Execution*(std::uint64_t job)>;

    static constexpr std::chrono::seconds kShellWait{60};

    // Registers exec.modex on `broker` (every rank), served by the shells
    // `find` gives.
    DirectModex(asio::io_context& loop, Broker& broker, Peers& peers, FindShell find);
    DirectModex(const DirectModex&) = delete;
    DirectModex& operator=(const DirectModex&) = delete;

    // Asks the broker of `rank` for what task `task` of `job` put there,
    // once it has put `key`.
    void ask(std::uint64_t job, std::uint32_t rank, std::uint32_t task, const std::string& key,
             Execution::ModexAnswer answer);

    // The shell of `job` has started here: the requests that came before
    // it are served.
    void shell_started(std::uint64_t job);

private:
    struct Waiting {
        std::uint64_t job = 0;
        std::uint32_t task = 0;
        std::string key;
        Responder responder;
        asio::steady_timer deadline;
    };
    static void serve(Execution& shell, std::uint64_t job, std::uint32_t task,
                      const std::string& key, Responder responder);

    asio::io_context& loop_;
    Peers& peers_;
    FindShell find_;
    std::set<std::uint64_t> started_;  // jobs whose shell started here, the latest kept
    std::list<Waiting> waiting_;       // a list: each one's timer must not move
};

}  // namespace gantry::broker
