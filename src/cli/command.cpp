#include "cli/command.h"

#include <iostream>
#include <iterator>
#include <sstream>

namespace gantry::cli {

int fail(const Error& error) {
    std::cerr << "gantry: " << error.str() << '\n';
    return kExitUsage;
}

int fail(std::string_view domain, std::string_view message) {
    return fail(Error(std::string(domain), std::string(message)));
}

std::optional<int> parse_options(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        return kExitOk;
    } catch (const CLI::CallForAllHelp&) {
        std::cout << app.help("", CLI::AppFormatMode::All);
        return kExitOk;
    } catch (const CLI::ParseError& e) {
        return fail(app.get_name(), e.what());
    }
    return std::nullopt;
}

std::vector<std::string> arguments_or_stdin(const std::vector<std::string>& args) {
    if (!args.empty())
        return args;
    std::vector<std::string> words;
    std::string word;
    while (std::cin >> word)
        words.push_back(word);
    return words;
}

std::string read_stdin() {
    return {std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
}

}  // namespace gantry::cli
