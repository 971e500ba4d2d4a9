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
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "overlay/certificate.h"
#include "overlay/config.h"
#include "overlay/message.h"
#include "overlay/tree.h"
#include "pmi/client.h"
#include "util/error.h"

namespace gantry::broker {

// What one broker publishes, and learns of the others.
struct BrokerAddress {
    std::string endpoint;    // tcp://HOST:PORT, empty for a broker without children
    std::string public_key;  // Z85
    bool operator==(const BrokerAddress&) const = default;
};

// The entry's value, and back. Errors name the entry's key.
std::string encode_address(const BrokerAddress& address);
Result<BrokerAddress> parse_address(std::string_view key, std::string_view value);

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

    struct Neighbours {
        std::optional<BrokerAddress> parent;  // none at rank 0
        std::vector<BrokerAddress> children;  // in the order of tree().children(rank())
    };
    // Under PMI: publishes `own`, waits for every broker to have published,
    // and reads the parent's and children's entries, then finalizes PMI.
    // Configured: the configuration's addresses and the instance's key.
    Result<Neighbours> exchange(const BrokerAddress& own);

private:
    Bootstrap(overlay::Rank rank, overlay::Tree tree) : rank_(rank), tree_(tree) {}

    overlay::Rank rank_ = 0;
    overlay::Tree tree_;
    std::optional<pmi::Client> client_;
    std::optional<overlay::Config> config_;
    std::optional<overlay::Certificate> certificate_;  // the instance's, when configured
    bool all_on_one_host_ = false;
};

}  // namespace gantry::broker
