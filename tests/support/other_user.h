// Talking to a socket as another user, for tests of who an instance lets in.
#pragma once

#include <string>

namespace gantry::test {

// Connects to the Unix socket at `socket_path` as uid and gid 65534 from a
// forked child (system calls only, so a test may have other threads
// running) and returns all the peer sent before closing, or "child
// failed: STATUS" / "pipe failed".
std::string connect_as_nobody(const std::string& socket_path);

}  // namespace gantry::test
