#include "broker/node.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <iostream>
#include <memory>

#include <asio/posix/stream_descriptor.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>

#include "broker/exec.h"
#include "broker/remote_exec.h"

namespace gantry::broker {

namespace {

// How long a broker waits for its children to confirm a shutdown.
constexpr std::chrono::milliseconds kShutdownGrace{3000};
// How soon a join that found no way to rank 0 yet is tried again: soon at
// first (the broker in between is most often a moment from up), then less
// often.
constexpr std::chrono::milliseconds kFirstJoinRetry{1};
constexpr std::chrono::milliseconds kLastJoinRetry{20};

class Node {
public:
    Node(Bootstrap bootstrap, NodeOptions options)
        : bootstrap_(std::move(bootstrap)),
          options_(std::move(options)),
          broker_(loop_, ::getuid(), bootstrap_.rank()),
          signals_(loop_, SIGINT, SIGTERM),
          grace_(loop_),
          retry_(loop_) {}

    Result<int> run() {
        std::string program = options_.shell_program;
        if (program.empty()) {
            auto found = job_shell_program();
            if (!found)
                return found.error();
            program = std::move(*found);
        }
        broker_.register_method(
            "broker.shutdown",
            [this](const overlay::Message&, Responder responder) { shutdown(responder); },
            ServedOn::kEveryRank);
        Membership::Events events;
        events.parent_lost = [this](const std::string& why) {
            if (ending_)
                return;  // told to go: the parent's goodbye is no news
            // Before it joined, a broker has no tasks to kill.
            std::cerr << "gantry: broker " << bootstrap_.rank() << ": " << why
                      << (joined_ ? "; its tasks are killed\n" : "\n");
            exit_code_ = 1;
            end();
        };
        events.parent_up = [this] { say_joined(); };
        events.refused = [this](const std::string& why) {
            std::cerr << "gantry: broker " << bootstrap_.rank() << ": " << why << '\n';
        };
        auto membership = Membership::join(loop_, broker_, bootstrap_, options_.membership, events);
        if (!membership)
            return membership.error();
        membership_ = std::move(*membership);
        // Rank 0 asks for shells once this rank has joined, after the loop
        // starts.
        exec_ = std::make_unique<NodeExec>(loop_, broker_, membership_->peers(),
                                           membership_->tree(), program);
        signals_.async_wait([this](const asio::error_code& failure, int) {
            if (!failure)
                end();
        });
        watch_lifeline();
        loop_.run();
        return exit_code_;
    }

private:
    // A broker started through a launch agent ends when the agent's input
    // does: its launcher is gone, or has closed it at the instance's end.
    void watch_lifeline() {
        if (bootstrap_.lifeline() < 0)
            return;
        lifeline_.emplace(loop_, ::dup(bootstrap_.lifeline()));
        read_lifeline();
    }
    void read_lifeline() {
        lifeline_->async_read_some(
            asio::buffer(lifeline_buffer_), [this](const asio::error_code& failure, std::size_t) {
                if (!failure) {
                    read_lifeline();
                    return;
                }
                if (failure == asio::error::operation_aborted || ending_)
                    return;
                std::cerr << "gantry: broker " << bootstrap_.rank()
                          << ": its launcher is gone; its tasks are killed\n";
                exit_code_ = 1;
                end();
            });
    }
    // Tells rank 0 about this node, once the way up is open.
    // A broker between this one and rank 0 may not be up yet itself ("no
    // route to rank 0"): then it asks again a little later.
    void say_joined() {
        if (joined_)
            return;
        joined_ = true;
        const Result<std::string>& topology = options_.topology_xml.get();
        if (!topology) {
            std::cerr << "gantry: broker " << bootstrap_.rank() << ": " << topology.error().str()
                      << '\n';
            exit_code_ = 1;
            end();
            return;
        }
        membership_->peers().call(
            0, "broker.join",
            {{"rank", bootstrap_.rank()},
             {"hostname", options_.hostname},
             {"topology", *topology},
             {"simulated", options_.simulated}},
            [this](const overlay::Reply& reply) {
                if (reply.result)
                    return;
                if (reply.message &&
                    reply.message->find("no route to rank 0") != std::string::npos && !ending_) {
                    retry_.expires_after(join_retry_);
                    join_retry_ = std::min(join_retry_ * 2, kLastJoinRetry);
                    retry_.async_wait([this](const asio::error_code& e) {
                        joined_ = !!e;
                        if (!e)
                            say_joined();
                    });
                    return;
                }
                std::cerr << reply.message.value_or("gantry: join refused") << '\n';
                exit_code_ = 1;
                end();
            });
    }

    // broker.shutdown: children first, so that the tree comes down from its
    // leaves, then this broker.
    void shutdown(Responder responder) {
        shutdown_reply_ = responder;
        const auto children = membership_->overlay().children_up();
        auto waiting = std::make_shared<std::size_t>(children.size());
        for (const overlay::Rank child : children)
            membership_->peers().call(child, "broker.shutdown", Json::object(),
                                      [this, waiting](const overlay::Reply& reply) {
                                          if (!reply.more && --*waiting == 0)
                                              end();
                                      });
        if (children.empty()) {
            end();
            return;
        }
        grace_.expires_after(kShutdownGrace);
        grace_.async_wait([this](const asio::error_code& failure) {
            if (!failure)
                end();
        });
    }

    void end() {
        if (ending_)
            return;
        ending_ = true;
        if (exec_)
            exec_->kill_all();
        retry_.cancel();
        if (shutdown_reply_)
            shutdown_reply_->result(Json::object());
        // The reply is sent before the overlay goes.
        asio::post(loop_, [this] {
            lifeline_.reset();
            exec_.reset();
            membership_.reset();
            loop_.stop();
        });
    }

    asio::io_context loop_;
    Bootstrap bootstrap_;
    NodeOptions options_;
    Broker broker_;
    asio::signal_set signals_;
    asio::steady_timer grace_;
    asio::steady_timer retry_;
    std::chrono::milliseconds join_retry_ = kFirstJoinRetry;
    std::unique_ptr<Membership> membership_;
    std::unique_ptr<NodeExec> exec_;  // after membership_, whose peers it calls
    std::optional<Responder> shutdown_reply_;
    std::optional<asio::posix::stream_descriptor> lifeline_;
    std::array<char, 64> lifeline_buffer_{};
    bool joined_ = false;
    bool ending_ = false;
    int exit_code_ = 0;
};

}  // namespace

Result<int> run_node(Bootstrap bootstrap, NodeOptions options) {
    // A gone peer must not end the broker.
    ::signal(SIGPIPE, SIG_IGN);
    Node node(std::move(bootstrap), std::move(options));
    return node.run();
}

}  // namespace gantry::broker
