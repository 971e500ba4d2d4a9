// A jobspec: the JSON document that holds a program's parameters, every
// option of `gantry run` (MPMD apps included) plus the requests a scheduler
// needs. `gantry submit` stores it in the instance's database; the broker
// reads it back to map and run the job.
//
// A plain value: parse checks structure, types and ranges, with one message
// per violation naming its JSON path (`jobspec: apps[1].ntasks: expected a
// non-negative integer, got -3`); encode writes every key, defaults included,
// in one fixed order. Option strings (map_by, rank_by, bind_to, hosts,
// hostfile, rankfile, topology, display, env rules, input, output, error,
// output_dir, rlimits, umask, mpi) are carried as given and NOT checked here:
// the mapper and the shell, the layers that use them, check them at submit
// as `gantry run` does. An embedded R is checked through
// ResourceSet::from_json.
//
// Keys, defaults, the options they come from and the messages: docs/jobspec.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/rset.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry {

struct Jobspec {
    static constexpr int kVersion = 1;
    static constexpr int kUrgencyHold = 0;  // held until raised
    static constexpr int kUrgencyDefault = 16;
    static constexpr int kUrgencyExpedite = 31;  // runs before any other

    // One --env, --env-remove or --env-file, applied in the order given.
    struct EnvRule {
        enum class Kind { kSet, kRemove, kFile };  // keys "set", "remove", "file"
        Kind kind = Kind::kSet;
        std::string text;  // NAME=VALUE or NAME (the front end's value), a glob, a path
        friend bool operator==(const EnvRule&, const EnvRule&) = default;
    };

    // One executable of the program: one segment of the command line. App 0's
    // map_by, rank_by, bind_to, env and cwd are the job's, as on the command
    // line; its hosts and hostfile are job.hosts and job.hostfile (must be empty).
    struct App {
        std::vector<std::string> command;  // the program and its arguments; not empty
        std::uint32_t ntasks = 0;          // -n; 0: one per slot
        std::string map_by;                // --map-by; empty: the default
        std::string rank_by;               // --rank-by
        std::string bind_to;               // --bind-to
        std::string hosts;                 // -H of a later app
        std::string hostfile;              // --hostfile of a later app
        std::vector<EnvRule> env;          // --env, --env-remove, --env-file
        std::string cwd;                   // --cwd; empty: the job's, then attributes.cwd
        friend bool operator==(const App&, const App&) = default;
    };

    // The job's mapping options.
    struct Job {
        std::string hosts;     // -H
        std::string hostfile;  // --hostfile
        std::string rankfile;  // --rankfile
        std::string topology;  // --topology
        bool oversubscribe = false;
        bool nolocal = false;
        bool hwthread_cpus = false;        // --use-hwthread-cpus
        std::vector<std::string> display;  // --display items, in order
        friend bool operator==(const Job&, const Job&) = default;
    };

    // What the scheduler allocates.
    struct Resources {
        std::uint32_t nodes = 0;   // 0: as many as needed
        std::uint32_t ntasks = 0;  // task slots; 0: as the apps ask
        std::uint32_t cores_per_task = 1;
        std::uint32_t gpus_per_task = 0;
        bool exclusive = false;  // whole nodes
        // --requires: an RFC 31 constraint on the nodes (docs/formats/constraint.md);
        // {}: any node. Its operators are checked by the scheduler at submit.
        Json constraint = Json::object();
        std::optional<ResourceSet> R;  // --resources: run on exactly these
        friend bool operator==(const Resources&, const Resources&) = default;
    };

    struct Dependency {
        enum class Type { kAfterOk, kAfterAny, kAfterNotOk };  // "afterok", ...
        Type type = Type::kAfterOk;
        std::uint64_t id = 0;  // the job waited for; positive
        friend bool operator==(const Dependency&, const Dependency&) = default;
    };

    // How the job is queued and launched. Durations and times in seconds.
    struct Attributes {
        std::string name;
        std::string cwd;                                 // the front end's, at submit
        std::map<std::string, std::string> environment;  // the front end's, at submit
        double time_limit = 0;                           // 0: none
        double kill_timeout = 5;
        bool kill_on_bad_exit = false;
        int urgency = kUrgencyDefault;  // 0..31
        double begin_time = 0;          // since the epoch; 0: now
        std::vector<Dependency> dependencies;
        bool label_io = false;
        std::string output;  // -o; empty: the front end's stdout
        std::string error;   // -e
        std::string input;   // -i; empty: rank 0
        bool unbuffered = false;
        bool timestamp_output = false;     // --timestamp-output
        std::string output_dir;            // --output-filename; empty: none
        bool merge_stderr = false;         // --merge-stderr-to-stdout
        std::vector<std::string> rlimits;  // --rlimit values, in order
        std::string umask;                 // octal; empty: the front end's
        std::string mpi;                   // --mpi: pmix, pmi1 or none; empty: PMI-1 and PMIx
        friend bool operator==(const Attributes&, const Attributes&) = default;
    };

    std::vector<App> apps;
    Job job;
    Resources resources;
    Attributes attributes;

    // One JSON document; every violation is one message naming its JSON path.
    static Result<Jobspec> parse(std::string_view text);
    static Result<Jobspec> from_json(const Json& document);

    // Compact, every key written, keys in the order of docs/jobspec.md:
    // version, apps, job, resources, attributes.
    std::string encode() const;
    Json to_json() const;  // the same document as a JSON value (keys sorted)

    friend bool operator==(const Jobspec&, const Jobspec&) = default;
};

// What an instance cannot take of a jobspec, if anything: only real nodes
// run tasks, and its scheduler needs every app's task count. The broker
// says it in the jobspec's words, a command in those of its options.
struct InstanceRefusal {
    enum class Reason {
        kSimulatedTopology,  // job.topology
        kAppWithoutNtasks,   // apps[app].ntasks is 0 in an MPMD program
    };
    Reason reason = Reason::kSimulatedTopology;
    std::size_t app = 0;
    friend bool operator==(const InstanceRefusal&, const InstanceRefusal&) = default;
};
std::optional<InstanceRefusal> instance_refusal(const Jobspec& spec);

// "afterok", "afterany", "afternotok".
std::string_view dependency_type_name(Jobspec::Dependency::Type type);

}  // namespace gantry
