// A PMIx server for one node's tasks of a job, on top of the OpenPMIx
// server library (docs/pmi.md, "PMIx"). Open MPI finds its launcher through
// PMIx only, so the shell serves it beside PMI-1.
//
// The library allows one server per process, started once and never
// restarted: the first Job starts it, and it lives until the process
// exits. It runs its own thread, from which the Events are called; each
// job is one PMIx namespace, registered while its Job lives.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/idset.h"
#include "util/error.h"

namespace gantry::pmix {

// What the server tells a job's tasks. All but `node` and `bindings` is
// job-wide: every node's server gets the same.
struct JobInfo {
    std::string nspace;                       // the namespace: at most 255 bytes
    std::uint32_t universe_size = 0;          // at least the job's size
    std::vector<std::uint32_t> app_of_rank;   // by rank; its size is the job's
    std::vector<std::uint32_t> node_of_rank;  // by rank: an index into node_names
    std::vector<std::string> node_names;      // the job's nodes, by node id
    std::uint32_t node = 0;                   // this one's node id
    // The cpus (OS indices) each task of this node is bound to, by rank;
    // missing or empty: unbound (the whole machine).
    std::map<std::uint32_t, IdSet> bindings;
};

// Called on the server's thread: whoever receives them hands them to its
// own thread.
struct Events {
    // A task called PMIx_Init / PMIx_Finalize (MPI_Init, MPI_Finalize).
    std::function<void(std::uint32_t rank)> connected;
    std::function<void(std::uint32_t rank)> finalized;
    // PMIx_Abort (MPI_Abort): the job is to end with `status`.
    std::function<void(std::uint32_t rank, int status, std::string message)> abort;
    // Every task of this node is in a fence of the whole job: `data` is
    // this node's part. `done` must be called once, from any thread, with
    // every node's parts concatenated (in any order), or with nothing when
    // the fence failed (its tasks get an error).
    using FenceDone = std::function<void(std::optional<std::string> all)>;
    std::function<void(std::string data, FenceDone done)> fence;
    // A task of this node asks for what task `rank` of another node put,
    // which no fence has carried (direct modex), and needs `key` of it
    // (empty: any). `done` must be called once, from any thread, with the
    // blob that node's Job::serve_modex gave once Job::has_key said the key
    // is there, or with nothing (the task's get fails). Unset: such gets
    // fail at once.
    using ModexDone = std::function<void(std::optional<std::string> data)>;
    std::function<void(std::uint32_t rank, std::string key, ModexDone done)> direct_modex;
};

class Job {
public:
    // Starts the process's server if it is not started yet, and registers
    // the job's namespace with the job-, app-, node- and process-level
    // information an MPI library asks for. Error: the server could not
    // start, or the library refused the namespace.
    static Result<std::unique_ptr<Job>> start(const JobInfo& info, Events events);

    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;
    // Deregisters the namespace and removes its directory; its events stop.
    ~Job();

    // The variables a task of this node needs to reach the server
    // (PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI*, ...), as NAME=VALUE,
    // and the two Open MPI needs to know it was started by a PMIx server
    // rather than as a singleton (OMPI_MCA_ess, OMPI_MCA_schizo). The task
    // is registered as one of this user's. Error: a rank of another node.
    Result<std::vector<std::string>> task_environment(std::uint32_t rank) const;

    // Direct modex, on the node of task `rank`: what the task put, as one
    // blob for the asking node's Events::direct_modex, once it has
    // committed it. `done` is called once, on the server's thread, with
    // nothing when the task has nothing to give (not of this node, or gone).
    void serve_modex(std::uint32_t rank, Events::ModexDone done) const;
    // Whether task `rank` of this node has committed `key`. The library
    // tells no one when a task commits: whoever waits for a key asks again.
    bool has_key(std::uint32_t rank, const std::string& key) const;

    // The job's temporary directory (PMIX_TMPDIR), removed with the Job.
    const std::string& directory() const { return directory_; }

private:
    Job(std::string nspace, std::string directory)
        : nspace_(std::move(nspace)), directory_(std::move(directory)) {}

    std::string nspace_;
    std::string directory_;
};

// The directory the server of process `pid` keeps its files in:
// $TMPDIR/gantry-pmix-PID (/tmp without TMPDIR). Removed when the process
// exits; a process that is killed cannot remove it, and whoever watches it
// does (shell/watcher.h, the broker of a job shell).
std::string server_directory_of(pid_t pid);

}  // namespace gantry::pmix
