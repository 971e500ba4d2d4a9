// How the brokers of one instance find each other when a parallel launcher
// starts them (`gantry run -n 4 gantry start`, `mpiexec.hydra -n 4 gantry
// start`, `srun --mpi=pmi2 -n 4 gantry start`, and `gantry start
// --test-size=4`, which is the first): the PMI size is the instance's size
// and the PMI rank the broker's rank, over whichever wire the launcher
// serves (pmi/client.h). Each broker makes its own CURVE key pair, binds
// its children's socket, and publishes both through the launcher's
// key-value space:
//
//   gantry.broker.R = ENDPOINT,KEY     (KEY: the Z85 public key in hex, so
//                                       that no launcher trips on its '=')
//
// After one barrier each broker reads its parent's entry (where to connect,
// and the key that socket must present) and its children's (the only keys
// let in). PMI is then done with.
//
// `gantry start -H HOSTS` is its own launcher: rank 0 starts a broker on
// each other host through a launch agent (overlay/launch_agent.h), whose
// stdin and stdout carry the same entries as lines: each broker writes its
// own, and rank 0 reads them in its event loop as they come and writes each
// broker its parent's, then its children's, as soon as it has those: a host
// that answered joins while the others are still being reached. No key
// leaves its broker but the public one, and only over the agent's channel
// (ssh's: authenticated and encrypted).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <asio/io_context.hpp>

#include "overlay/broker_address.h"
#include "overlay/certificate.h"
#include "overlay/config.h"
#include "overlay/launch_agent.h"
#include "overlay/message.h"
#include "overlay/tree.h"
#include "pmi/client.h"
#include "util/error.h"

namespace gantry::broker {

using overlay::BrokerAddress;
using overlay::encode_address;
using overlay::parse_address;

// A broker's place in an instance its launcher made, or a configuration
// file describes (overlay/config.h).
class Bootstrap {
public:
    // From the launcher's PMI, if this process has one with more than one
    // task (with one, the instance is this broker alone: none).
    static Result<std::optional<Bootstrap>> from_pmi(unsigned fanout);
    // From a configuration: this host's rank is its place among the hosts,
    // and every broker presents the instance's certificate.
    static Result<Bootstrap> from_config(const overlay::Config& config, std::string_view hostname);
    // Started by a launcher that hands the entries over a stream (`gantry
    // start --join`): the exchange writes this broker's entry as a line on
    // `out`, then reads its parent's and its children's lines from `in`,
    // which then stays open as the lifeline. `launcher_address`, when
    // known, is the address this host reached the launcher at (ssh's
    // SSH_CONNECTION says it); it follows the entry after a space.
    static Bootstrap from_stream(int in, int out, overlay::Rank rank, overlay::Rank size,
                                 unsigned fanout, std::string launcher_address);
    // Rank 0 of the brokers it started on `hosts`, ranks 1 to N in their
    // order; each has `timeout` to answer.
    static Bootstrap from_launched(std::shared_ptr<overlay::LaunchedHosts> hosts, unsigned fanout,
                                   std::chrono::milliseconds timeout);

    overlay::Rank rank() const { return rank_; }
    const overlay::Tree& tree() const { return tree_; }
    // The key pair this broker presents: the instance's, when configured;
    // else a new one of its own.
    Result<overlay::Certificate> certificate() const;
    // Where this broker's children connect, when configured: the host (an
    // address, or "*": every interface) and port to bind.
    std::optional<std::pair<std::string, std::uint16_t>> bind_address() const;
    // Under PMI: whether the launcher placed every broker on this host (its
    // PMI_process_mapping names one node), so that loopback joins them.
    bool all_on_one_host() const { return all_on_one_host_; }
    // From a stream: the descriptor whose end says that the launcher is
    // gone; else -1.
    int lifeline() const { return stream_in_; }

    struct Neighbours {
        std::optional<BrokerAddress> parent;  // none at rank 0
        std::vector<BrokerAddress> children;  // in the order of tree().children(rank())
    };
    // Properties of the nodes by rank, when configured (overlay/config.h).
    std::map<std::string, IdSet> properties() const {
        return config_ ? config_->properties : std::map<std::string, IdSet>{};
    }

    // Under PMI: publishes `own`, waits for every broker to have published,
    // and reads the parent's and children's entries, then finalizes PMI.
    // Configured: the configuration's addresses and the instance's key.
    // From a stream: writes `own`, reads the neighbours. Not for rank 0 of
    // launched brokers (launched()), whose exchange is exchange_launched.
    Result<Neighbours> exchange(const BrokerAddress& own);

    // Rank 0 of brokers it launched (from_launched).
    bool launched() const { return launched_ != nullptr; }
    // What becomes of the launched brokers' exchange. No handler may end
    // the exchange.
    struct LaunchEvents {
        // The keys of rank 0's children heard from so far: let them in
        // (each comes before the child is answered, and so connects).
        std::function<void(std::vector<std::string> keys)> authorize;
        // Every host answered; their agents' stderr is passed on from now.
        std::function<void()> done;
        // One line naming the host at fault; the exchange is over.
        std::function<void(const Error&)> failed;
    };
    class Exchange {
    public:
        virtual ~Exchange() = default;  // stops it
    };
    // Reads each launched broker's entry in `loop` as it comes (each host
    // has the launch timeout in all), and answers each broker once its
    // parent's and children's entries are in.
    std::unique_ptr<Exchange> exchange_launched(asio::io_context& loop, const BrokerAddress& own,
                                                LaunchEvents events);

private:
    class LaunchExchange;
    Bootstrap(overlay::Rank rank, overlay::Tree tree) : rank_(rank), tree_(tree) {}
    Result<Neighbours> exchange_stream(const BrokerAddress& own);

    overlay::Rank rank_ = 0;
    overlay::Tree tree_;
    std::optional<pmi::Client> client_;
    std::optional<overlay::Config> config_;
    std::optional<overlay::Certificate> certificate_;  // the instance's, when configured
    bool all_on_one_host_ = false;
    int stream_in_ = -1;
    int stream_out_ = -1;
    std::string launcher_address_;
    std::shared_ptr<overlay::LaunchedHosts> launched_;
    std::chrono::milliseconds launch_timeout_{0};
};

}  // namespace gantry::broker
