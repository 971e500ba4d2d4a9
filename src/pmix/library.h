// The OpenPMIx library, loaded when the first PMIx server starts rather than
// when the program does. Loading it with its dependencies (libevent, munge,
// udev) costs every gantry process about a millisecond of CPU; most never
// serve PMIx (brokers, front ends, shells of jobs that do not speak it).
//
// library.cpp defines each PMIx function the server calls as a forwarder to
// the loaded library's own, so server.cpp calls the documented API as is.
#pragma once

#include "util/error.h"

namespace gantry::pmix {

// Loads the library once per process; later calls return the first result.
// Fails with the file and the loader's reason when it cannot be loaded.
Status load_library();

}  // namespace gantry::pmix
