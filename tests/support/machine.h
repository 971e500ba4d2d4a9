// Who and where the tests run, as gantry's outputs name them.
#pragma once

#include <string>

namespace gantry::test {

// This machine's name up to its first dot: the name gantry gives it in R,
// task maps and messages.
std::string host_name();

// The user running the tests (the USER column of `gantry jobs`); the uid
// when it has no name.
std::string user_name();

}  // namespace gantry::test
