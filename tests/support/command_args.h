// Building a command line for the tests that run one job in several ways.
#pragma once

#include <string>
#include <vector>

namespace gantry::test {

// `options` with each "CMD" replaced by `command`.
inline std::vector<std::string> with_command(const std::vector<std::string>& options,
                                             const std::vector<std::string>& command) {
    std::vector<std::string> args;
    for (const std::string& option : options)
        if (option == "CMD")
            args.insert(args.end(), command.begin(), command.end());
        else
            args.push_back(option);
    return args;
}

}  // namespace gantry::test
