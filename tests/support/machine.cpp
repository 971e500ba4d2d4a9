#include "support/machine.h"

#include <pwd.h>
#include <unistd.h>

namespace gantry::test {

std::string host_name() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0)
        return "localhost";
    const std::string host = name;
    return host.substr(0, host.find('.'));
}

std::string user_name() {
    const passwd* entry = ::getpwuid(::getuid());
    return entry ? entry->pw_name : std::to_string(::getuid());
}

}  // namespace gantry::test
