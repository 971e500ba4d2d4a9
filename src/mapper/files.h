// The two placement files PRRTE reads: the sequential (seq) file, one task
// per line in rank order, and the rankfile, each rank's host and CPUs; and
// the texts of files as the mapper takes them, read by its caller.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/idset.h"
#include "util/error.h"

namespace gantry {

// A file as the mapper's caller read it (the mapper reads none itself): its
// text, or why it could not be read.
struct FileText {
    std::string text;
    std::optional<std::string> unreadable;  // the system's reason: "No such file or directory"
    friend bool operator==(const FileText&, const FileText&) = default;
};

// Files by their path.
using FileTexts = std::map<std::string, FileText, std::less<>>;

// The text of `path` among `files`, or the error reading it gave, in
// `domain`: `hostfile "hosts": No such file or directory`, where `what`
// says which file it is and `as_given` is the name shown, when not `path`.
// A path that `files` lacks is a file that does not exist.
Result<std::string> file_text(const FileTexts& files, std::string domain, std::string_view what,
                              const std::string& path, std::string_view as_given = {});

// A CPU list as a file gives it: logical CPUs (`0-2,5`), or CPUs of one
// package (`1:0-2`, cores 0-2 of package 1).
struct CpuList {
    std::optional<unsigned> package;
    IdSet cpus;
    friend bool operator==(const CpuList&, const CpuList&) = default;
};

// seq: `host [cpus]` per line (the LSF affinity form `host cpus numa
// mempolicy` too, the last two ignored); `#` comments.
struct SeqLine {
    std::string host;
    std::optional<CpuList> cpus;
    friend bool operator==(const SeqLine&, const SeqLine&) = default;
};
Result<std::vector<SeqLine>> parse_seq_file(std::string_view text, std::string_view path);

// seq without FILE=, as PRRTE: one task per host line of a hostfile, in line
// order, unbound. Slot counts and other keywords are ignored, `user@` is
// dropped, `#` and `//` comments are skipped, and so are `^host` lines and
// the lines of the hosts they exclude. Check the file with parse_hostfile
// first: this only reads it.
std::vector<SeqLine> seq_lines_of_hostfile(std::string_view text);
// ... and of `-H a,b:2,a`: one task per name, in order (`:N` ignored).
std::vector<SeqLine> seq_lines_of_hosts(std::string_view hosts);

// rankfile: `rank N=host slot=LIST`; `host` may be `+n<i>`, the i-th node.
struct RankfileLine {
    unsigned rank = 0;
    std::string host;                    // empty when relative
    std::optional<unsigned> node_index;  // +n<i>
    CpuList cpus;
    friend bool operator==(const RankfileLine&, const RankfileLine&) = default;
};
Result<std::vector<RankfileLine>> parse_rankfile(std::string_view text, std::string_view path);

}  // namespace gantry
