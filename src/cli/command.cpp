#include "cli/command.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <iostream>

#include "util/file.h"

namespace gantry::cli {

int fail(const Error& error) {
    // One write: a line cut short by a signal would lose its message.
    std::cerr << "gantry: " + error.str() + "\n";
    return kExitUsage;
}

std::vector<char*> argv_of(std::vector<std::string>& args) {
    std::vector<char*> pointers;
    pointers.reserve(args.size() + 1);
    for (std::string& arg : args)
        pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    return pointers;
}

Result<std::string> gantry_executable() {
    std::error_code failure;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", failure);
    if (failure)
        return Error("gantry", "cannot find the gantry executable: " + failure.message());
    return path.string();
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

// srun and flux read `-n=2` as `-n 2`; CLI11 would give -n the value "=2".
// No value of a one-letter option begins with '=' otherwise.
std::string without_attached_equals(std::string text) {
    if (text.starts_with('='))
        text.erase(0, 1);
    return text;
}

void unmark_values(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        option->transform(without_mark);
        if (!option->get_snames().empty())
            option->transform(without_attached_equals);
    }
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

// --- CLI11's messages, in the user's terms -------------------------------------

std::vector<const CLI::App*> apps_of(const CLI::App& app) {
    std::vector<const CLI::App*> apps{&app};
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        for (const CLI::App* inner : apps_of(*sub))
            apps.push_back(inner);
    return apps;
}

// The option CLI11 names `name` (its get_name(): long name first, else
// short, else the positional's), in the app or one of its subcommands.
const CLI::Option* option_named(const CLI::App& app, std::string_view name) {
    for (const CLI::App* each : apps_of(app))
        for (const CLI::Option* option : each->get_options())
            if (option->get_name() == name || option->get_name(true) == name)
                return option;
    return nullptr;
}

// How the user spelled the option: the last argument that names it ("-n",
// "--nslots", "--nslots=x", "-nx"); CLI11's name when none does (a
// positional, or a short flag in a group such as -qm).
std::string typed_name(const CLI::App& app, std::string_view name,
                       const std::vector<std::string>& args) {
    const CLI::Option* option = option_named(app, name);
    if (option == nullptr)
        return std::string(name);
    std::string typed(name);
    for (const std::string& arg : args) {
        if (arg == "--")
            break;
        for (const std::string& lname : option->get_lnames())
            if (arg == "--" + lname || arg.starts_with("--" + lname + "="))
                typed = "--" + lname;
        for (const std::string& sname : option->get_snames())
            if (arg.starts_with("-" + sname) && !arg.starts_with("--"))
                typed = "-" + sname;
    }
    return typed;
}

// What a number option needs, from the type CLI11 gave it.
std::string number_kind(const CLI::Option& option) {
    const std::string type = option.get_type_name();
    if (type.starts_with("UINT"))
        return "a number of 0 or more";
    if (type.starts_with("INT"))
        return "a whole number";
    if (type.starts_with("FLOAT"))
        return "a number";
    return "";
}

// A value CLI11 could not convert: the option's own checks say best what it
// needs (`-n needs a positive number, not "x"`); else its type does.
std::string conversion_message(const CLI::App& app, std::string_view name, const std::string& value,
                               const std::vector<std::string>& args) {
    const std::string typed = typed_name(app, name, args);
    const CLI::Option* option = option_named(app, name);
    if (option == nullptr)
        return typed + ": bad value " + quote(value);
    if (option->get_items_expected_max() == 0)
        return typed + " takes no value, not " + quote(value);
    auto* checked = const_cast<CLI::Option*>(option);  // get_validator is not const
    for (int index = 0;; ++index) {
        CLI::Validator* validator = nullptr;
        try {
            validator = checked->get_validator(index);
        } catch (const CLI::OptionNotFound&) {
            break;
        }
        std::string copy = value;
        if (const std::string message = (*validator)(copy); !message.empty())
            return typed + " " + message;
    }
    const std::string kind = number_kind(*option);
    if (kind.empty())
        return typed + ": bad value " + quote(value);
    return typed + " needs " + kind + ", not " + quote(value);
}

std::string_view after(std::string_view text, std::string_view prefix) {
    return text.substr(prefix.size());
}

// Every name of the subcommands the app offers, for "one of ..." lists.
std::string subcommand_names(const CLI::App& app) {
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names += (names.empty() ? "" : ", ") + sub->get_name();
    return names;
}

// The app that needed a subcommand and got none, the deepest one parsed.
const CLI::App& app_missing_subcommand(const CLI::App& app) {
    for (const CLI::App* sub : app.get_subcommands())
        return app_missing_subcommand(*sub);
    return app;
}

// One line for each kind of CLI11 ParseError, naming options and values as
// the user typed them; `args` in the order typed.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error,
                                const std::vector<std::string>& args) {
    const std::string text = unmarked(error.what());
    const std::string see_help = " (see gantry " + app.get_name() + " --help)";
    const auto typed = [&](std::string_view name) { return typed_name(app, name, args); };
    const std::size_t colon = text.find(": ");
    const std::string head = colon == std::string::npos ? text : text.substr(0, colon);
    const std::string tail = colon == std::string::npos ? "" : text.substr(colon + 2);

    if (dynamic_cast<const CLI::ExtrasError*>(&error)) {
        const CLI::App& parsed = app_missing_subcommand(app);
        std::vector<std::string> extras = parsed.remaining();
        if (extras.empty())
            return text + see_help;
        const std::string first = unmarked(extras.front());
        if (first.size() > 1 && first[0] == '-' &&
            first.find_first_not_of("0123456789.", 1) != std::string::npos)
            return "unknown option " +
                   quote(first.starts_with("--") ? first.substr(0, first.find('=')) : first) +
                   see_help;
        return "unexpected argument " + quote(first) + see_help;
    }
    if (dynamic_cast<const CLI::RequiredError*>(&error)) {
        if (text.starts_with("A subcommand") || text.starts_with("Requires at least")) {
            const CLI::App& parsed = app_missing_subcommand(app);
            const std::vector<std::string> extras = parsed.remaining();
            if (!extras.empty())
                return "unknown subcommand " + quote(unmarked(extras.front())) + ": one of " +
                       subcommand_names(parsed) + see_help;
            return "missing subcommand: one of " + subcommand_names(parsed) + see_help;
        }
        if (text.ends_with(" is required")) {
            const std::string name = text.substr(0, text.size() - 12);
            const CLI::Option* option = option_named(app, name);
            if (option != nullptr && option->get_lnames().empty() && option->get_snames().empty())
                return "missing " + name + see_help;
            return typed(name) + " is required" + see_help;
        }
        return text + see_help;
    }
    if (dynamic_cast<const CLI::ConversionError*>(&error)) {
        constexpr std::string_view kConvert = "Could not convert: ";
        if (text.starts_with(kConvert)) {
            const std::string_view rest = after(text, kConvert);
            const std::size_t equals = rest.find(" = ");
            if (equals != std::string_view::npos) {
                const std::string name(rest.substr(0, equals));
                // CLI11 joins the values with commas: one, most often.
                return conversion_message(app, name, std::string(rest.substr(equals + 3)), args);
            }
        }
        if (tail == "Should be true/false or a number" || tail == "too many inputs for a flag")
            return typed(head) + " takes no value (or true or false)";
        return text;
    }
    if (dynamic_cast<const CLI::ValidationError*>(&error) && colon != std::string::npos)
        return typed(head) + " " + tail;
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&error)) {
        if (tail.ends_with(" missing"))
            return typed(head) + " needs a value";
        if (tail.starts_with("At Most 1 "))
            return typed(head) + " is given more than once; it takes one value";
        if (tail.starts_with("At Most ") || tail.starts_with("At least "))
            return typed(head) + ": " + std::string(1, static_cast<char>(std::tolower(tail[0]))) +
                   tail.substr(1);
        if (text.ends_with(" was given a disallowed flag override"))
            return typed(text.substr(0, text.find(' '))) + " takes no value";
        return text;
    }
    if (const bool excludes = dynamic_cast<const CLI::ExcludesError*>(&error) != nullptr;
        excludes || dynamic_cast<const CLI::RequiresError*>(&error)) {
        const std::string_view verb = excludes ? " excludes " : " requires ";
        const std::size_t at = text.find(verb);
        if (at == std::string::npos)
            return text;
        const std::string one = typed(text.substr(0, at));
        const std::string other = typed(text.substr(at + verb.size()));
        return excludes ? one + " cannot be used with " + other : one + " needs " + other;
    }
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
        return fail(app.get_name(),
                    parse_error_message(app, e, std::vector<std::string>(argv + 1, argv + argc)));
    }
    return std::nullopt;
}

CLI::Validator needs(std::string what, std::function<bool(const std::string&)> fits) {
    // An empty description: the help shows the option's type name alone.
    return CLI::Validator(
        [what = std::move(what), fits = std::move(fits)](std::string& value) {
            return fits(value) ? std::string() : "needs " + what + ", not " + quote(value);
        },
        "");
}

CLI::Validator needs_positive_number() {
    return needs("a positive number", [](const std::string& text) {
        return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
               text.find_first_not_of('0') != std::string::npos;
    });
}

CLI::Validator needs_one_of(std::vector<std::string> names) {
    std::string what = "one of ";
    for (std::size_t i = 0; i < names.size(); ++i)
        what += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return needs(what, [names = std::move(names)](const std::string& text) {
        return std::find(names.begin(), names.end(), text) != names.end();
    });
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
    read_all(STDIN_FILENO, text);
    return text;
}

}  // namespace gantry::cli
