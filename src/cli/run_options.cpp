// The command line of `gantry run` and `gantry submit` -> Jobspec
// (docs/jobspec.md, docs/commands/run.md).
#include "cli/run_options.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>

#include "mapper/jobspec_map.h"
#include "mapper/policy.h"
#include "shell/environment.h"
#include "util/duration.h"

namespace gantry::cli {
namespace {

bool is_one_of(std::string_view option, std::initializer_list<std::string_view> names) {
    for (const std::string_view name : names)
        if (option == name)
            return true;
    return false;
}

bool takes_value(std::string_view option) {
    return is_one_of(option, {"-n",
                              "--n",
                              "-np",
                              "--np",
                              "--map-by",
                              "--mapby",
                              "--rank-by",
                              "--rankby",
                              "--bind-to",
                              "--bindto",
                              "-H",
                              "--host",
                              "--hostfile",
                              "--machinefile",
                              "--resources",
                              "--topology",
                              "--display",
                              "--runtime-options",
                              "--rtos",
                              "--rankfile",
                              "--env",
                              "--env-remove",
                              "--env-file",
                              "--cwd",
                              "-o",
                              "--output",
                              "-e",
                              "--error",
                              "-i",
                              "--input",
                              "-t",
                              "--time-limit",
                              "--kill-timeout",
                              "--rlimit",
                              "--umask",
                              "--job-name",
                              "-N",
                              "--nodes",
                              "-c",
                              "--cores-per-task",
                              "-g",
                              "--gpus-per-task",
                              "--urgency",
                              "--begin-time",
                              "--dependency"});
}

// Options only an instance's scheduler acts on.
bool is_scheduling_option(std::string_view option) {
    return is_one_of(option, {"-N", "--nodes", "-c", "--cores-per-task", "-g", "--gpus-per-task",
                              "--exclusive", "--urgency", "--begin-time", "--dependency"});
}

// Options every segment may give for its own app's tasks.
bool is_task_option(std::string_view option) {
    return is_one_of(option, {"--env", "--env-remove", "--env-file", "--cwd"});
}

bool is_app_option(std::string_view option) {
    return is_one_of(option, {"-n", "--n", "-np", "--np", "--map-by", "--mapby", "--rank-by",
                              "--rankby", "--bind-to", "--bindto"});
}

// A decimal integer from `least` to `most`, digits only.
std::optional<std::uint64_t> integer_of(std::string_view text, std::uint64_t least,
                                        std::uint64_t most) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value < least ||
        value > most)
        return std::nullopt;
    return value;
}

double now_in_seconds() {
    using std::chrono::duration;
    return duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double seconds_of(std::chrono::milliseconds duration) {
    return static_cast<double>(duration.count()) / 1e3;
}

// Reads one command line into a RunCommand, option by option; `domain` is
// the command's name, in every message.
class Parser {
public:
    explicit Parser(std::string_view command) : domain_(command) {}

    Result<RunCommand> parse(int argc, char** argv);

private:
    Error error(std::string message) const { return Error(domain_, std::move(message)); }
    Error error_in(std::string message, std::string_view value) const {
        return Error::in(domain_, std::move(message), value);
    }
    std::string see_help() const { return " (see gantry " + domain_ + " --help)"; }

    Jobspec& spec() { return command_.jobspec; }
    Jobspec::App& app() { return spec().apps.back(); }
    std::size_t app_index() const { return command_.jobspec.apps.size() - 1; }

    void start();
    Status apply(std::string_view option, const std::string& value);
    void apply_task_option(std::string_view option, const std::string& value);
    Status apply_app_option(std::string_view option, const std::string& value);
    Status apply_job_option(std::string_view option, const std::string& value);
    Status apply_scheduling_option(std::string_view option, const std::string& value);
    Status apply_flag(std::string_view flag);
    Status add_display(const std::string& value);
    Status add_dependencies(const std::string& value);
    Status set_begin_time(const std::string& value);
    Status set_resources(const std::string& path);
    Result<double> duration_seconds(const std::string& value) const;
    void finish();

    std::string domain_;
    RunCommand command_;
    bool name_given_ = false;
};

// What the front end brings: its directory and environment, from which the
// jobspec's relative paths and its tasks' environments are taken.
void Parser::start() {
    spec().apps.emplace_back();
    std::error_code failed;
    const std::filesystem::path cwd = std::filesystem::current_path(failed);
    if (!failed)
        spec().attributes.cwd = cwd.string();
    spec().attributes.environment = shell::Environment::inherited().to_map();
    // A jobspec's variables have names; an odd "=VALUE" entry has none.
    spec().attributes.environment.erase("");
}

void Parser::apply_task_option(std::string_view option, const std::string& value) {
    using Kind = Jobspec::EnvRule::Kind;
    if (option == "--cwd")
        app().cwd = value;
    else
        app().env.push_back({option == "--env"          ? Kind::kSet
                             : option == "--env-remove" ? Kind::kRemove
                                                        : Kind::kFile,
                             value});
}

// Policies are checked here, so that a bad one is reported where it is
// given; the jobspec keeps the text as given.
Status Parser::apply_app_option(std::string_view option, const std::string& value) {
    if (is_one_of(option, {"-n", "--n", "-np", "--np"})) {
        const auto n = integer_of(value, 1, 1u << 30);
        if (!n)
            return error_in(std::string(option) + " needs a task count", value);
        app().ntasks = static_cast<std::uint32_t>(*n);
        return {};
    }
    const auto set_once = [&](std::string& slot, const Status& parsed, std::string_view name) {
        if (!parsed)
            return parsed;
        if (!slot.empty())
            return Status(error(std::string(name) + " given twice for one app"));
        slot = value;
        return Status();
    };
    const auto checked = [](const auto& parsed) {
        return parsed ? Status() : Status(parsed.error());
    };
    if (is_one_of(option, {"--map-by", "--mapby"}))
        return set_once(app().map_by, checked(parse_map_by(value)), "--map-by");
    if (is_one_of(option, {"--rank-by", "--rankby"}))
        return set_once(app().rank_by, checked(parse_rank_by(value)), "--rank-by");
    return set_once(app().bind_to, checked(parse_bind_to(value)), "--bind-to");
}

Status Parser::add_display(const std::string& value) {
    std::istringstream items(value);
    for (std::string item; std::getline(items, item, ',');) {
        const bool svg = item.starts_with("map:svg=") && item.size() > 8;
        if (!svg && !is_one_of(item, {"map", "map:json", "bindings", "R", "plan"}))
            return error_in(
                "--display shows map, map:json, map:svg=FILE, bindings, R or plan, not " +
                    quote(item),
                value);
        spec().job.display.push_back(item);
    }
    return {};
}

Status Parser::set_resources(const std::string& path) {
    auto text = read_option_file(spec(), path, "resource set");
    if (!text)
        return text.error();
    auto resources = ResourceSet::parse(*text);
    if (!resources)
        return resources.error();
    spec().resources.R = std::move(*resources);
    return {};
}

Result<double> Parser::duration_seconds(const std::string& value) const {
    auto duration = parse_duration(domain_, value);
    if (!duration)
        return duration.error();
    return seconds_of(*duration);
}

Status Parser::apply_job_option(std::string_view option, const std::string& value) {
    Jobspec::Job& job = spec().job;
    Jobspec::Attributes& attributes = spec().attributes;
    if (is_one_of(option, {"-H", "--host"}))
        job.hosts = value;
    else if (is_one_of(option, {"--hostfile", "--machinefile"}))
        job.hostfile = value;
    else if (option == "--resources")
        return set_resources(value);
    else if (option == "--topology")
        job.topology = value;
    else if (option == "--rankfile")
        job.rankfile = value;
    else if (option == "--display")
        return add_display(value);
    else if (is_one_of(option, {"-o", "--output"}))
        attributes.output = value;
    else if (is_one_of(option, {"-e", "--error"}))
        attributes.error = value;
    else if (is_one_of(option, {"-i", "--input"}))
        attributes.input = value;
    else if (is_one_of(option, {"-t", "--time-limit"}) || option == "--kill-timeout") {
        auto seconds = duration_seconds(value);
        if (!seconds)
            return seconds.error();
        (option == "--kill-timeout" ? attributes.kill_timeout : attributes.time_limit) = *seconds;
    } else if (option == "--rlimit")
        attributes.rlimits.push_back(value);
    else if (option == "--umask")
        attributes.umask = value;
    else if (option == "--job-name") {
        if (value.empty())
            return error("--job-name needs a name");
        attributes.name = value;
        name_given_ = true;
    } else if (is_one_of(option, {"--runtime-options", "--rtos"})) {
        if (value != "donotlaunch")
            return error_in("the only runtime option is donotlaunch, not " + quote(value), value);
        command_.dry_run = true;
    }
    return {};
}

// --dependency TYPE:ID[,TYPE:ID...], the option given as often as needed.
Status Parser::add_dependencies(const std::string& value) {
    using Type = Jobspec::Dependency::Type;
    const std::string_view usage = "--dependency takes afterok:ID, afterany:ID or afternotok:ID";
    if (value.empty() || value.back() == ',')
        return error_in(std::string(usage), value);
    std::istringstream items(value);
    for (std::string item; std::getline(items, item, ',');) {
        const std::size_t colon = item.find(':');
        const std::string_view name = std::string_view(item).substr(0, colon);
        std::optional<Type> type;
        for (const Type known : {Type::kAfterOk, Type::kAfterAny, Type::kAfterNotOk})
            if (dependency_type_name(known) == name)
                type = known;
        if (!type || colon == std::string::npos)
            return error_in(std::string(usage) + ", not " + quote(item), value);
        const auto id = integer_of(std::string_view(item).substr(colon + 1), 1,
                                   std::numeric_limits<std::uint64_t>::max());
        if (!id)
            return error_in(
                "--dependency: job ids are positive integers, not " + quote(item.substr(colon + 1)),
                value);
        spec().attributes.dependencies.push_back({*type, *id});
    }
    return {};
}

// --begin-time +DURATION (from now) or seconds since the epoch.
Status Parser::set_begin_time(const std::string& value) {
    const auto bad = [&] {
        return Status(error_in(
            "--begin-time takes +DURATION (+30s, +5m, +1h) or seconds since the epoch", value));
    };
    if (value.starts_with('+')) {
        auto delay = parse_duration(domain_, std::string_view(value).substr(1));
        if (!delay)
            return bad();
        spec().attributes.begin_time = now_in_seconds() + seconds_of(*delay);
        return {};
    }
    double seconds = 0;
    const auto [end, failed] = std::from_chars(value.data(), value.data() + value.size(), seconds,
                                               std::chars_format::fixed);
    if (value.empty() || failed != std::errc{} || end != value.data() + value.size() ||
        !std::isfinite(seconds) || seconds < 0 || value[0] == '-')
        return bad();
    spec().attributes.begin_time = seconds;
    return {};
}

Status Parser::apply_scheduling_option(std::string_view option, const std::string& value) {
    command_.scheduling_options.emplace_back(option);
    Jobspec::Resources& resources = spec().resources;
    constexpr std::uint64_t kMost = std::numeric_limits<std::uint32_t>::max();
    if (is_one_of(option, {"-N", "--nodes"})) {
        const auto n = integer_of(value, 1, kMost);
        if (!n)
            return error_in(std::string(option) + " needs a node count", value);
        resources.nodes = static_cast<std::uint32_t>(*n);
    } else if (is_one_of(option, {"-c", "--cores-per-task"})) {
        const auto n = integer_of(value, 1, kMost);
        if (!n)
            return error_in(std::string(option) + " needs a core count", value);
        resources.cores_per_task = static_cast<std::uint32_t>(*n);
    } else if (is_one_of(option, {"-g", "--gpus-per-task"})) {
        const auto n = integer_of(value, 0, kMost);
        if (!n)
            return error_in(std::string(option) + " needs a GPU count", value);
        resources.gpus_per_task = static_cast<std::uint32_t>(*n);
    } else if (option == "--exclusive") {
        resources.exclusive = true;
    } else if (option == "--urgency") {
        const auto urgency = urgency_of(value);
        if (!urgency)
            return error_in("--urgency needs 0-31, hold, default or expedite", value);
        spec().attributes.urgency = *urgency;
    } else if (option == "--begin-time") {
        return set_begin_time(value);
    } else {
        return add_dependencies(value);
    }
    return {};
}

Status Parser::apply_flag(std::string_view flag) {
    Jobspec::Job& job = spec().job;
    Jobspec::Attributes& attributes = spec().attributes;
    if (is_one_of(flag, {"--dry-run", "--do-not-launch"}))
        command_.dry_run = true;
    else if (flag == "--display-map")
        job.display.push_back("map");
    else if (flag == "--report-bindings")
        job.display.push_back("bindings");
    else if (flag == "--oversubscribe")
        job.oversubscribe = true;
    else if (flag == "--nolocal")
        job.nolocal = true;
    else if (flag == "--use-hwthread-cpus")
        job.hwthread_cpus = true;
    else if (is_one_of(flag, {"-l", "--label-io"}))
        attributes.label_io = true;
    else if (is_one_of(flag, {"-u", "--unbuffered"}))
        attributes.unbuffered = true;
    else if (is_one_of(flag, {"-K", "--kill-on-bad-exit"}))
        attributes.kill_on_bad_exit = true;
    else if (is_one_of(flag, {"-h", "--help"}))
        command_.help = true;
    else
        return error("unknown option " + quote(flag) + see_help());
    return {};
}

// One option of a segment: an app's own, a task option, a later app's
// hosts, or (in the first segment only) the job's.
Status Parser::apply(std::string_view option, const std::string& value) {
    const bool first = app_index() == 0;
    if (is_app_option(option))
        return apply_app_option(option, value);
    if (is_task_option(option)) {
        apply_task_option(option, value);
        return {};
    }
    if (!first && is_one_of(option, {"-H", "--host"})) {
        app().hosts = value;
        return {};
    }
    if (!first && is_one_of(option, {"--hostfile", "--machinefile"})) {
        app().hostfile = value;
        return {};
    }
    if (!first)
        return error(std::string(option) + " in app " + std::to_string(app_index()) +
                     "'s segment: it is the job's; give it before the first command");
    if (is_scheduling_option(option))
        return apply_scheduling_option(option, value);
    if (takes_value(option))
        return apply_job_option(option, value);
    return apply_flag(option);
}

// The job's name defaults to its first program's, as listings show it.
void Parser::finish() {
    if (name_given_ || app().command.empty())
        return;
    const std::string& program = spec().apps.front().command.front();
    const std::string base = std::filesystem::path(program).filename().string();
    spec().attributes.name = base.empty() ? program : base;
}

// Splits argv at ':' into app segments; each segment's options come before
// its command, whose own arguments are left alone.
Result<RunCommand> Parser::parse(int argc, char** argv) {
    start();
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == ":") {
            if (app().command.empty())
                return error("app " + std::to_string(app_index()) + " has no command");
            spec().apps.emplace_back();
            continue;
        }
        if (!app().command.empty() || arg.empty() || arg[0] != '-') {
            app().command.push_back(arg);
            continue;
        }
        std::string value;
        const std::size_t equals = arg.find('=');
        if (arg.starts_with("--") && equals != std::string::npos) {
            value = arg.substr(equals + 1);
            arg = arg.substr(0, equals);
        } else if (takes_value(arg)) {
            if (i + 1 >= argc)
                return error(arg + " needs a value");
            value = argv[++i];
        }
        if (auto status = apply(arg, value); !status)
            return status.error();
    }
    if (!command_.help && app().command.empty())
        return error("no command to run" + see_help());
    finish();
    return std::move(command_);
}

}  // namespace

Result<RunCommand> parse_run_command(std::string_view command, int argc, char** argv) {
    return Parser(command).parse(argc, argv);
}

std::optional<int> urgency_of(std::string_view text) {
    if (text == "hold")
        return Jobspec::kUrgencyHold;
    if (text == "default")
        return Jobspec::kUrgencyDefault;
    if (text == "expedite")
        return Jobspec::kUrgencyExpedite;
    const auto urgency = integer_of(text, Jobspec::kUrgencyHold, Jobspec::kUrgencyExpedite);
    if (!urgency)
        return std::nullopt;
    return static_cast<int>(*urgency);
}

}  // namespace gantry::cli
