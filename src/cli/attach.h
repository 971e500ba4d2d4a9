// Attaching a front end to a job of an instance: its output as it comes,
// this process's stdin and signals forwarded to it, its exit code at the
// end. `gantry attach` is this alone; `gantry run` inside an instance does
// it after its submit. Reference: docs/commands/attach.md.
#pragma once

#include <cstdint>
#include <string>

#include "overlay/client.h"

namespace gantry::cli {

// The exit code of a front end that detached (two Ctrl-C within 2 s): the
// shell's code for a command ended by SIGINT.
inline constexpr int kExitDetached = 130;

struct AttachOptions {
    bool label_io = false;      // "RANK: " before every line, whatever the jobspec says
    bool forward_stdin = true;  // this process's stdin to the job, EOF included
    // The job exists for this front end alone (gantry run, alloc): SIGINT,
    // SIGTERM or SIGHUP while it is pending cancel it. Otherwise (gantry
    // attach) they detach and leave it queued.
    bool owns_job = false;
    // A second Ctrl-C within 2 s detaches; not where the instance ends with
    // this front end (gantry run -H), which would take the job with it.
    bool can_detach = true;
};

// Follows job `id` with `job.attach` on `stream`, which that request holds
// until the job ends; stdin and signals go to the job over a second
// connection to `uri`. Output goes to stdout and stderr as the tasks wrote
// it; exceptions are printed on stderr as `gantry: job 7: exception: TYPE:
// NOTE`. When this process's stdout or stderr is closed (EPIPE), the job gets
// SIGPIPE, as a pipeline's writer would, and is canceled if it outlives its
// kill timeout. SIGPIPE is ignored from here on. Returns the command's exit
// code: the job's exit code, 1 when it has none (it never ran) or the
// instance fails (message printed), kExitInstanceGone when the instance shut
// down or the connection was lost, kExitDetached, or 128+N when signal N
// ended it while the job was pending.
int attach_job(overlay::Client& stream, const std::string& uri, std::uint64_t id,
               const AttachOptions& options);

}  // namespace gantry::cli
