// The job manager of an instance: takes jobspecs, keeps every job's record
// in the store as it happens, queues jobs in the scheduler, maps each
// allocated job inside its R and runs its shell (a child of the broker,
// src/broker/exec.h), and serves the job methods of the API to front ends.
//
// States and events (Flux RFC 21 names):
//
//   NEW      `submit` {"userid","urgency"}, and "interactive":true for a job
//            bound to the connection that submitted it (job.submit below)
//   DEPEND   waits for its dependencies; `depend` {} once they are met
//   SCHED    queued; `alloc` {} when the scheduler gives it R
//   RUN      `start` {} once its tasks have started; `finish` {"status":W}
//            with the job's wait status (W = exit code << 8, or the signal)
//   CLEANUP  `release` {"ranks":"all","final":true}
//   INACTIVE `clean` {}
//
// `exception` {"type","severity":0,"note","userid"} may come at any point
// before INACTIVE: cancel, dependency, exec (the job could not start),
// lost (the broker ended while the job ran). A job that never ran goes
// straight to INACTIVE after it; a running one is terminated first.
//
// Methods (params -> result; ids are integers; errors are one line):
//
//   job.submit   {"jobspec":{...}, "interactive":bool}  -> {"id":N}
//                interactive: canceled if that connection closes while the
//                job is pending; its stdin closed if it closes while it runs
//   job.list     {"states":["RUN",...], "name":S, "userid":N, "limit":N}   (all optional)
//                -> {"jobs":[SUMMARY...]}  newest first
//   job.info     {"id"}                   -> SUMMARY + {"jobspec","R","taskmap",
//                                             "eventlog":[EVENT...],
//                                             "task_exits":[{"rank","wait_status"}]}
//   job.eventlog {"id","follow":bool}     -> stream of {"events":[EVENT...]};
//                                             with follow, ends after `clean`
//   job.attach   {"id"}                   -> stream: first {"jobspec":{...}}, then
//                                             {"output":[CHUNK...]} and
//                                             {"events":[EVENT...]} as they come,
//                                             last SUMMARY (the job is INACTIVE)
//   job.stdin    {"id",DATA,"eof":bool}   -> {}   (active jobs; kept until the tasks start)
//   job.kill     {"id","signal":N}        -> {}   (RUN only; default SIGTERM)
//   job.cancel   {"id"}                   -> {}   pending: removed; running:
//                                             SIGTERM, SIGKILL after its kill timeout
//   job.cancelall {"states":[...], "userid":N, "dry_run":bool}  (all optional)
//                -> {"canceled":N}  as job.cancel, every active job in those
//                states (default: any) of that user (default: any) that is
//                not already ending; dry_run: counted, not canceled
//   job.urgency  {"id","urgency":N}       -> {}   (pending only)
//   job.wait     {"id"} | {"all":true}    -> SUMMARY once INACTIVE |
//                                             {"jobs":[SUMMARY...]} of every job
//                                             active when asked, once all are
//   job.purge    {"id"} | {}              -> {"purged":N}  (INACTIVE jobs only)
//
//   resource.list {}                      -> {"all":R,"free":R,"allocated":R,"down":R}
//                the inventory, and its parts by the scheduler's state (RFC 20)
//
//   SUMMARY = {"id","name","state","urgency","userid","submit_time","state_time",
//              "ntasks","exit_code" (null until known),
//              "exception" (null, or {"type","note"} of the first fatal one)}
//   EVENT   = {"seq","time","name","context"}
//   CHUNK   = {"seq","stream":"stdout"|"stderr","rank",DATA};
//             rank -1 is the shell's own messages ("gantry: task 3 ... killed")
//   DATA    = "data":TEXT, or "data":BASE64,"encoding":"base64" where the
//             bytes are not UTF-8 (put_data, util/base64.h)
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "broker/broker.h"
#include "broker/exec_service.h"
#include "broker/store.h"
#include "formats/rset.h"
#include "topo/rank_topologies.h"
#include "util/error.h"
#include "util/json.h"

namespace gantry::broker {

struct JobCounts {
    std::size_t pending = 0;  // NEW, DEPEND, SCHED
    std::size_t running = 0;  // RUN, CLEANUP
    std::size_t inactive = 0;
};

class JobManager {
public:
    // Keeps the jobs of `store` (the instance's, opened or created in its
    // state directory, Store::kFileName); a job found unfinished there was
    // lost with the broker that ran it: it gets an `exception` (type
    // "lost") and becomes INACTIVE; one still waiting waits again.
    // Registers the job.* methods and resource.list. Jobs are mapped on the
    // topology of each rank of `inventory` in `topologies`, and run by
    // `exec_service` (which gives the shells the same topologies).
    static Result<std::unique_ptr<JobManager>> open(asio::io_context& loop, Broker& broker,
                                                    Store store, const ResourceSet& inventory,
                                                    const RankTopologies& topologies,
                                                    std::unique_ptr<ExecService> exec_service);
    ~JobManager();
    JobManager(const JobManager&) = delete;
    JobManager& operator=(const JobManager&) = delete;

    JobCounts counts() const;
    // The nodes of `ranks` went down (their brokers were lost): no job is
    // placed there any more. The jobs running there hear of it from the
    // exec service.
    void nodes_down(const IdSet& ranks);
    // Their brokers are back: jobs may be placed there again.
    void nodes_up(const IdSet& ranks);
    // The nodes the owner drained (resource.drain), by rank, with the
    // reason given: no new job goes there.
    std::map<std::uint32_t, std::string> drained() const;
    // Terminates every running job and waits for their shells (the instance
    // is ending); `done` runs on the loop once none is left.
    void stop(std::function<void()> done);

private:
    struct Impl;
    explicit JobManager(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace gantry::broker
