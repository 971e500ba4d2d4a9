// Files a user names on the command line (hostfiles, rankfiles, env files,
// --input): read whole, or refused with the reason the system gives. And
// the loops that read a blocking descriptor to its end and write all of a
// buffer to one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gantry {

// Why the file at `path` cannot be read ("No such file or directory",
// "Permission denied", "Is a directory"); nothing when it can.
std::optional<std::string> unreadable_reason(const std::string& path);

// The whole file at `path`, or an error in `domain` naming it and the
// reason: `hostfile "hosts.txt": No such file or directory`, where `what`
// says which file it is ("hostfile", "--env-file") and `as_given` is the
// name shown, when not `path` (a relative path as the user typed it).
Result<std::string> read_named_file(std::string domain, std::string_view what,
                                    const std::string& path, std::string_view as_given = {});

// Appends what `fd` holds to its end (again after EINTR) to `text`.
// Returns 0, or the errno of the failing read; `text` then keeps what came
// before it.
int read_all(int fd, std::string& text);

// Writes all of `bytes` to the blocking descriptor `fd`, again after EINTR
// and after a partial write. Returns 0, or the errno of the failing write
// (EIO if it wrote nothing). Allocates nothing: a forked child may call it.
int write_all(int fd, std::string_view bytes);

}  // namespace gantry
