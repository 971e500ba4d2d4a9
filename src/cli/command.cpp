#include "cli/command.h"

#include <unistd.h>

#include <cerrno>
#include <iostream>

namespace gantry::cli {

int fail(const Error& error) {
    std::cerr << "gantry: " << error.str() << '\n';
    return kExitUsage;
}

int fail(std::string_view domain, std::string_view message) {
    return fail(Error(std::string(domain), std::string(message)));
}

namespace {

// CLI11 prints the app's own name in the usage line; ours are subcommands.
class SubcommandFormatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App* app, std::string name) const override {
        return CLI::Formatter::make_usage(app, "gantry " + name);
    }
};

void use_gantry_usage(CLI::App& app, const std::shared_ptr<CLI::Formatter>& formatter) {
    app.formatter(formatter);
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        use_gantry_usage(*sub, formatter);
}

// CLI11 2.1 reads any value of the form "[a,b]" given to an option that
// takes several (every vector, positionals too) as the list a, b
// (Option::_add_result), so `gantry hostlist '[1-3,5-6]'` would reach the
// command as "1-3" and "5-6", and a program's argument "[x]" as "x". A mark
// after each argument that ends in ']' hides that form from CLI11, and a
// transform on every option takes it off again, so that values arrive
// exactly as typed. Arguments that end in the mark are marked too: then
// every value that ends in it was marked, and loses exactly one.
constexpr char kBracketMark = '\x1f';

bool needs_mark(std::string_view arg) {
    return arg.ends_with(']') || arg.ends_with(kBracketMark);
}

std::string without_mark(std::string text) {
    if (text.ends_with(kBracketMark))
        text.pop_back();
    return text;
}

void unmark_values(CLI::App& app) {
    for (CLI::Option* option : app.get_options())
        option->transform(without_mark);
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        unmark_values(*sub);
}

// CLI11 wants the arguments last first.
std::vector<std::string> marked_arguments(int argc, char** argv) {
    std::vector<std::string> args;
    for (int i = argc - 1; i > 0; --i) {
        args.emplace_back(argv[i]);
        if (needs_mark(args.back()))
            args.back() += kBracketMark;
    }
    return args;
}

// Marks that CLI11 quotes back in its messages.
std::string unmarked(std::string text) {
    std::erase(text, kBracketMark);
    return text;
}

Error nth_error(std::string_view domain, std::string message, std::string_view text,
                std::optional<std::size_t> offset) {
    message = "--nth: " + message;
    if (offset)
        return Error::at(std::string(domain), std::move(message), text, *offset);
    return Error::in(std::string(domain), std::move(message), text);
}

}  // namespace

std::optional<int> parse_options(CLI::App& app, int argc, char** argv) {
    use_gantry_usage(app, std::make_shared<SubcommandFormatter>());
    unmark_values(app);
    try {
        app.parse(marked_arguments(argc, argv));
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        return kExitOk;
    } catch (const CLI::CallForAllHelp&) {
        std::cout << app.help("", CLI::AppFormatMode::All);
        return kExitOk;
    } catch (const CLI::ParseError& e) {
        return fail(app.get_name(), unmarked(e.what()));
    }
    return std::nullopt;
}

std::string unescape_delimiter(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\' || i + 1 == text.size()) {
            out += text[i];
            continue;
        }
        const char next = text[++i];
        if (next == 'n')
            out += '\n';
        else if (next == 't')
            out += '\t';
        else if (next == '\\')
            out += '\\';
        else
            out += {'\\', next};
    }
    return out;
}

Result<IdSet> nth_positions(std::string_view domain, std::string_view noun, std::string_view text,
                            std::uint64_t count) {
    const bool from_end = text.starts_with('-');
    const auto indices = IdSet::parse(from_end ? text.substr(1) : text);
    if (!indices) {
        const auto& offset = indices.error().offset();
        return nth_error(domain, indices.error().message(), text,
                         offset ? std::optional(*offset + (from_end ? 1 : 0)) : std::nullopt);
    }
    if (indices->empty())
        return nth_error(domain, "no index given", text, std::nullopt);
    const std::string size =
        " is out of range for " + std::to_string(count) + " " + std::string(noun) + "s";
    if (!from_end) {
        if (*indices->last() >= count)
            return nth_error(domain, "index " + std::to_string(*indices->last()) + size, text,
                             std::nullopt);
        return *indices;
    }
    if (indices->contains(0))
        return nth_error(domain, "index -0 is not a position; -1 is the last " + std::string(noun),
                         text, std::nullopt);
    if (*indices->last() > count)
        return nth_error(domain, "index -" + std::to_string(*indices->last()) + size, text,
                         std::nullopt);
    IdSet positions;  // -k is position count - k
    for (const IdSet::Range& range : indices->ranges())
        positions.insert(static_cast<IdSet::Id>(count - range.hi),
                         static_cast<IdSet::Id>(count - range.lo));
    return positions;
}

std::vector<std::string> arguments_or_stdin(const std::vector<std::string>& args) {
    if (!args.empty())
        return args;
    // One read of the whole input, then a split: word-by-word stream
    // extraction costs more than parsing a hundred thousand ids.
    const std::string text = read_stdin();
    std::vector<std::string> words;
    constexpr std::string_view kSpace = " \t\n\r\f\v";
    for (std::size_t begin = text.find_first_not_of(kSpace); begin != std::string::npos;) {
        const std::size_t end = text.find_first_of(kSpace, begin);
        words.emplace_back(text, begin, end == std::string::npos ? std::string::npos : end - begin);
        begin = end == std::string::npos ? end : text.find_first_not_of(kSpace, end);
    }
    return words;
}

std::string read_stdin() {
    // read(2) in large blocks: std::cin synchronised with stdio reads a byte
    // at a time, which costs more than parsing a million-task map.
    std::string text;
    char block[1 << 16];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, block, sizeof block);
        if (n > 0)
            text.append(block, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    return text;
}

}  // namespace gantry::cli
