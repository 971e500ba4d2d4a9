// The command line of `gantry run` and `gantry submit` -> Jobspec
// (docs/jobspec.md, docs/commands/run.md).
#include "cli/run_options.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

#include "formats/constraint.h"
#include "formats/hostlist.h"
#include "mapper/jobspec_map.h"
#include "mapper/policy.h"
#include "shell/environment.h"
#include "shell/map_io.h"
#include "shell/output.h"
#include "util/duration.h"

namespace gantry::cli {
namespace {

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

double seconds_of(std::chrono::milliseconds duration) {
    return static_cast<double>(duration.count()) / 1e3;
}

template <typename T>
Status checked(const Result<T>& parsed) {
    return parsed ? Status() : Status(parsed.error());
}

// Whether `name` is one of the space-separated spellings in `names`.
bool spells(std::string_view names, std::string_view name) {
    for (std::size_t start = 0; start < names.size();) {
        const std::size_t space = std::min(names.find(' ', start), names.size());
        if (names.substr(start, space - start) == name)
            return true;
        start = space + 1;
    }
    return false;
}

// Where an option may be given.
enum class Scope {
    kApp,         // any segment, for its app; app 0's are also the job's defaults
    kHosts,       // the first segment: the job's; a later one: its app's
    kJob,         // the first segment only
    kScheduling,  // the first segment only; only an instance's scheduler acts on it
};

// One option as given: its name as spelled and its values.
struct Given {
    std::string name;
    std::string value;   // the first value, if the option takes one
    std::string second;  // the second, for NAME VALUE options (-genv, --mca)
};

// Reads one command line into a RunCommand, option by option; `domain` is
// the command's name, in every message.
class Parser {
public:
    explicit Parser(std::string_view command) : domain_(command) {}

    Result<RunCommand> parse(int argc, char** argv);

private:
    // One option: all its spellings, how many values follow, where it may
    // be given, and what it does.
    struct Option {
        std::string_view names;  // space-separated
        int values;              // 0 (a flag), 1 or 2
        Scope scope;
        Status (*apply)(Parser&, const Given&);
    };
    static const Option kOptions[];

    // The actions of options that only set one field of the jobspec: `Part`
    // is its job, resources or attributes, `Field` a member of that part.
    template <auto Part, auto Field>
    static Status set_true(Parser& p, const Given&) {
        (p.spec().*Part).*Field = true;
        return {};
    }
    template <auto Part, auto Field>
    static Status set_text(Parser& p, const Given& g) {
        (p.spec().*Part).*Field = g.value;
        return {};
    }
    // --env, --env-remove, --env-file: one rule of that kind, as given.
    template <Jobspec::EnvRule::Kind Kind>
    static Status add_rule(Parser& p, const Given& g) {
        p.add_env(Kind, g.value);
        return {};
    }
    // -env and -genv NAME VALUE: NAME=VALUE.
    static Status set_pair(Parser& p, const Given& g) {
        p.add_env(Jobspec::EnvRule::Kind::kSet, g.value + "=" + g.second);
        return {};
    }

    // An argv word read as an option: its table entry, the name as spelled,
    // and a value given in the same word (`--np=2`, `-n2`).
    struct Found {
        const Option* option = nullptr;
        std::string name;
        std::optional<std::string> attached;
    };
    static std::optional<Found> find(std::string_view word);

    Error error(std::string message) const { return Error(domain_, std::move(message)); }
    Error error_in(std::string message, std::string_view value) const {
        return Error::in(domain_, std::move(message), value);
    }
    std::string see_help() const { return " (see gantry " + domain_ + " --help)"; }

    Jobspec& spec() { return command_.jobspec; }
    Jobspec::App& app() { return spec().apps.back(); }
    std::size_t app_index() const { return command_.jobspec.apps.size() - 1; }

    void start();
    Status read_option(const Found& found, int argc, char** argv, int& i);
    Status apply(const Option& option, const Given& given);
    Status set_task_count(const Given& given);
    Status set_policy(std::string& slot, const Status& parsed, const Given& given,
                      std::string_view option);
    Status set_map_by(const Given& given);
    Status set_bind_to(const Given& given);
    void add_env(Jobspec::EnvRule::Kind kind, std::string text);
    Status set_export(const Given& given);
    void set_hosts(const Given& given);
    void set_hostfile(const Given& given);
    void show(std::string_view item);
    Status add_display(const Given& given);
    Status set_resources(const Given& given);
    Result<double> duration_seconds(const std::string& value) const;
    Status set_count(std::uint32_t& count, std::uint64_t least, const Given& given,
                     std::string_view noun);
    Status add_dependencies(const Given& given);
    Status set_begin_time(const Given& given);
    void finish();

    std::string domain_;
    RunCommand command_;
    bool name_given_ = false;
};

Status ok() {
    return {};
}

// Every option of run and submit, each once. The first spelling is
// gantry's and the one messages use where the user's is not at hand.
const Parser::Option Parser::kOptions[] = {
    // Each app's: its task count and policies.
    {"-n --np -np --n --ntasks", 1, Scope::kApp,
     [](Parser& p, const Given& g) { return p.set_task_count(g); }},
    {"--map-by --mapby -map-by", 1, Scope::kApp, [](Parser& p, const Given& g) { return p.set_map_by(g); }},
    {"--rank-by --rankby -rank-by", 1, Scope::kApp,
     [](Parser& p, const Given& g) {
         return p.set_policy(p.app().rank_by, checked(parse_rank_by(g.value)), g, "--rank-by");
     }},
    {"--bind-to --bindto -bind-to", 1, Scope::kApp,
     [](Parser& p, const Given& g) { return p.set_bind_to(g); }},
    // MPICH's -ppn, Open MPI's --npernode, srun's --ntasks-per-node.
    {"-ppn --npernode -npernode --ntasks-per-node --tasks-per-node", 1, Scope::kApp,
     [](Parser& p, const Given& g) {
         if (!integer_of(g.value, 1, 1u << 30))
             return Status(p.error_in(g.name + " needs a task count", g.value));
         if (!p.app().map_by.empty())
             return Status(p.error(g.name + " is --map-by ppr:" + g.value +
                                   ":node, and this app's --map-by is given already"));
         return p.set_map_by({g.name, "ppr:" + g.value + ":node", ""});
     }},
    // Each app's environment and directory.
    {"--env -x", 1, Scope::kApp,
     add_rule<Jobspec::EnvRule::Kind::kSet>},
    {"-env", 2, Scope::kApp,
     set_pair},
    {"--env-remove", 1, Scope::kApp,
     add_rule<Jobspec::EnvRule::Kind::kRemove>},
    {"--env-file", 1, Scope::kApp,
     add_rule<Jobspec::EnvRule::Kind::kFile>},
    {"--export", 1, Scope::kApp, [](Parser& p, const Given& g) { return p.set_export(g); }},
    {"--mca -mca --gmca -gmca", 2, Scope::kApp,
     [](Parser& p, const Given& g) {
         p.add_env(Jobspec::EnvRule::Kind::kSet, "OMPI_MCA_" + g.value + "=" + g.second);
         return ok();
     }},
    {"--cwd -D --chdir -wdir --wdir", 1, Scope::kApp,
     [](Parser& p, const Given& g) {
         p.app().cwd = g.value;
         return ok();
     }},
    // MPICH's environment options of the whole job.
    {"-genv", 2, Scope::kJob,
     set_pair},
    {"-genvlist", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         std::istringstream names(g.value);
         for (std::string name; std::getline(names, name, ',');)
             if (!name.empty())
                 p.add_env(Jobspec::EnvRule::Kind::kSet, name);
         return ok();
     }},
    {"-genvnone", 0, Scope::kJob,
     [](Parser& p, const Given&) {
         p.add_env(Jobspec::EnvRule::Kind::kRemove, "*");
         return ok();
     }},
    {"-genvall", 0, Scope::kJob, [](Parser&, const Given&) { return ok(); }},
    // Hosts: the job's, or a later app's.
    {"-H --host -host -hosts --hosts", 1, Scope::kHosts,
     [](Parser& p, const Given& g) {
         p.set_hosts(g);
         return ok();
     }},
    {"--hostfile -hostfile --machinefile -machinefile -f", 1, Scope::kHosts,
     [](Parser& p, const Given& g) {
         p.set_hostfile(g);
         return ok();
     }},
    // The job's mapping.
    {"--resources", 1, Scope::kJob, [](Parser& p, const Given& g) { return p.set_resources(g); }},
    {"--topology", 1, Scope::kJob,
     set_text<&Jobspec::job, &Jobspec::Job::topology>},
    {"--rankfile -rankfile", 1, Scope::kJob,
     set_text<&Jobspec::job, &Jobspec::Job::rankfile>},
    {"--oversubscribe -oversubscribe --overcommit -O", 0, Scope::kJob,
     set_true<&Jobspec::job, &Jobspec::Job::oversubscribe>},
    {"--nolocal -nolocal", 0, Scope::kJob,
     set_true<&Jobspec::job, &Jobspec::Job::nolocal>},
    {"--use-hwthread-cpus -use-hwthread-cpus", 0, Scope::kJob,
     set_true<&Jobspec::job, &Jobspec::Job::hwthread_cpus>},
    {"--display", 1, Scope::kJob, [](Parser& p, const Given& g) { return p.add_display(g); }},
    {"--display-map -display-map", 0, Scope::kJob,
     [](Parser& p, const Given&) {
         p.show("map");
         return ok();
     }},
    {"--report-bindings -report-bindings", 0, Scope::kJob,
     [](Parser& p, const Given&) {
         p.show("bindings");
         return ok();
     }},
    {"--dry-run --do-not-launch", 0, Scope::kJob,
     [](Parser& p, const Given&) {
         p.command_.dry_run = true;
         return ok();
     }},
    {"--runtime-options --rtos", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         if (g.value != "donotlaunch")
             return Status(p.error_in(
                 "the only runtime option is donotlaunch, not " + quote(g.value), g.value));
         p.command_.dry_run = true;
         return ok();
     }},
    {"--prtemca -prtemca", 2, Scope::kJob,
     [](Parser& p, const Given& g) {
         p.command_.notes.push_back(p.domain_ + ": --prtemca " + g.value +
                                    " ignored: gantry is not PRRTE (its own options set what "
                                    "PRRTE's parameters do)");
         return ok();
     }},
    // The job's input and output.
    {"-l --label-io --label --tag-output -tag-output", 0, Scope::kJob,
     set_true<&Jobspec::attributes, &Jobspec::Attributes::label_io>},
    {"-u --unbuffered", 0, Scope::kJob,
     set_true<&Jobspec::attributes, &Jobspec::Attributes::unbuffered>},
    {"-o --output", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         p.spec().attributes.output = g.value;
         return shell::check_template(p.domain_, "--output", g.value);
     }},
    {"-e --error", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         p.spec().attributes.error = g.value;
         return shell::check_template(p.domain_, "--error", g.value);
     }},
    {"-i --input", 1, Scope::kJob,
     set_text<&Jobspec::attributes, &Jobspec::Attributes::input>},
    {"--timestamp-output -timestamp-output", 0, Scope::kJob,
     set_true<&Jobspec::attributes, &Jobspec::Attributes::timestamp_output>},
    {"--output-filename -output-filename", 1, Scope::kJob,
     set_text<&Jobspec::attributes, &Jobspec::Attributes::output_dir>},
    {"--merge-stderr-to-stdout -merge-stderr-to-stdout", 0, Scope::kJob,
     set_true<&Jobspec::attributes, &Jobspec::Attributes::merge_stderr>},
    // The job's limits and name.
    {"-t --time-limit", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         const auto limit = parse_time_limit(p.domain_, g.value);
         if (!limit)
             return Status(limit.error());
         p.spec().attributes.time_limit = seconds_of(*limit);
         return ok();
     }},
    {"--kill-timeout", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         const auto seconds = p.duration_seconds(g.value);
         if (!seconds)
             return Status(seconds.error());
         p.spec().attributes.kill_timeout = *seconds;
         return ok();
     }},
    {"-K --kill-on-bad-exit", 0, Scope::kJob,
     set_true<&Jobspec::attributes, &Jobspec::Attributes::kill_on_bad_exit>},
    {"--rlimit", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         p.spec().attributes.rlimits.push_back(g.value);
         return ok();
     }},
    {"--umask", 1, Scope::kJob,
     set_text<&Jobspec::attributes, &Jobspec::Attributes::umask>},
    // srun's --mpi: which interface the tasks get; without it, PMI-1 and PMIx.
    {"--mpi", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         if (g.value != "pmix" && g.value != "pmi1" && g.value != "none")
             return Status(p.error_in(g.name + " takes pmix, pmi1 or none", g.value));
         p.spec().attributes.mpi = g.value;
         return ok();
     }},
    {"-J --job-name", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         if (g.value.empty())
             return Status(p.error(g.name + " needs a name"));
         p.spec().attributes.name = g.value;
         p.name_given_ = true;
         return ok();
     }},
    {"--launch-agent --prefix -prefix --launch-timeout --overlay-address", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         if (g.value.empty())
             return Status(p.error(g.name + " needs a value"));
         const std::string name = g.name == "-prefix" ? "--prefix" : g.name;
         p.command_.launch_options.insert(p.command_.launch_options.end(), {name, g.value});
         return ok();
     }},
    {"--uri", 1, Scope::kJob,
     [](Parser& p, const Given& g) {
         if (g.value.empty())
             return Status(p.error("--uri needs an instance's URI"));
         p.command_.uri = g.value;
         return ok();
     }},
    {"-h --help", 0, Scope::kJob,
     [](Parser& p, const Given&) {
         p.command_.help = true;
         return ok();
     }},
    // Requests to an instance's scheduler.
    {"-N --nodes", 1, Scope::kScheduling,
     [](Parser& p, const Given& g) {
         return p.set_count(p.spec().resources.nodes, 1, g, "a node count");
     }},
    {"-c --cores-per-task --cpus-per-task", 1, Scope::kScheduling,
     [](Parser& p, const Given& g) {
         return p.set_count(p.spec().resources.cores_per_task, 1, g, "a core count");
     }},
    {"-g --gpus-per-task", 1, Scope::kScheduling,
     [](Parser& p, const Given& g) {
         return p.set_count(p.spec().resources.gpus_per_task, 0, g, "a GPU count");
     }},
    {"--exclusive", 0, Scope::kScheduling,
     set_true<&Jobspec::resources, &Jobspec::Resources::exclusive>},
    {"--requires", 1, Scope::kScheduling,
     [](Parser& p, const Given& g) {
         return add_requirement(p.domain_, p.spec().resources.constraint, g.value);
     }},
    {"--urgency", 1, Scope::kScheduling,
     [](Parser& p, const Given& g) {
         const auto urgency = urgency_of(g.value);
         if (!urgency)
             return Status(
                 p.error_in(g.name + " needs 0-31, hold, default or expedite", g.value));
         p.spec().attributes.urgency = *urgency;
         return ok();
     }},
    {"--begin-time", 1, Scope::kScheduling,
     [](Parser& p, const Given& g) { return p.set_begin_time(g); }},
    {"--dependency -d", 1, Scope::kScheduling,
     [](Parser& p, const Given& g) { return p.add_dependencies(g); }},
};

// The table entry of an argv word that begins with '-': the whole word
// (`--np`), the part before '=' (`--np=2`, `-n=2`), or a one-letter option
// and its value run together (`-n2`, `-N1`, `-c4`).
std::optional<Parser::Found> Parser::find(std::string_view word) {
    const auto entry = [](std::string_view name) -> const Option* {
        for (const Option& option : kOptions)
            if (spells(option.names, name))
                return &option;
        return nullptr;
    };
    if (const Option* option = entry(word))
        return Found{option, std::string(word), std::nullopt};
    if (const std::size_t equals = word.find('='); equals != std::string_view::npos)
        if (const Option* option = entry(word.substr(0, equals)))
            return Found{option, std::string(word.substr(0, equals)),
                         std::string(word.substr(equals + 1))};
    if (word.size() > 2 && word[1] != '-')
        if (const Option* option = entry(word.substr(0, 2)); option && option->values == 1)
            return Found{option, std::string(word.substr(0, 2)), std::string(word.substr(2))};
    return std::nullopt;
}

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

Status Parser::set_task_count(const Given& given) {
    const auto n = integer_of(given.value, 1, 1u << 30);
    if (!n)
        return error_in(given.name + " needs a task count", given.value);
    app().ntasks = static_cast<std::uint32_t>(*n);
    return {};
}

// Policies are checked here, so that a bad one is reported where it is
// given; the jobspec keeps the text as given.
Status Parser::set_policy(std::string& slot, const Status& parsed, const Given& given,
                          std::string_view option) {
    if (!parsed)
        return parsed;
    if (!slot.empty())
        return error(std::string(option) + " given twice for one app");
    slot = given.value;
    return {};
}

// PRRTE's DISPLAY qualifier asks for the map, as --display map does.
Status Parser::set_map_by(const Given& given) {
    const auto policy = parse_map_by(given.value);
    if (policy && policy->display)
        show("map");
    return set_policy(app().map_by, checked(policy), given, "--map-by");
}

// PRRTE's REPORT qualifier asks for the bindings, as --report-bindings does.
Status Parser::set_bind_to(const Given& given) {
    const auto policy = parse_bind_to(given.value);
    if (policy && policy->report)
        show("bindings");
    return set_policy(app().bind_to, checked(policy), given, "--bind-to");
}

void Parser::add_env(Jobspec::EnvRule::Kind kind, std::string text) {
    app().env.push_back({kind, std::move(text)});
}

// Slurm's --export: ALL (the default: the front end's environment), NONE
// (none of it), or a list of NAME (copied) and NAME=VALUE (set), on top of
// nothing unless ALL is in it.
Status Parser::set_export(const Given& given) {
    using Kind = Jobspec::EnvRule::Kind;
    std::vector<std::string> items;
    std::istringstream words(given.value);
    for (std::string item; std::getline(words, item, ',');)
        items.push_back(item);
    if (items.empty() || std::any_of(items.begin(), items.end(), [](const std::string& item) {
            return item.empty() || item.front() == '=';
        }))
        return error_in(given.name + " takes ALL, NONE or NAME[=VALUE],...", given.value);
    if (std::find(items.begin(), items.end(), "ALL") == items.end())
        add_env(Kind::kRemove, "*");
    for (const std::string& item : items)
        if (item != "ALL" && item != "NONE")
            add_env(Kind::kSet, item);
    return {};
}

void Parser::set_hosts(const Given& given) {
    (app_index() == 0 ? spec().job.hosts : app().hosts) = given.value;
}

void Parser::set_hostfile(const Given& given) {
    (app_index() == 0 ? spec().job.hostfile : app().hostfile) = given.value;
}

void Parser::show(std::string_view item) {
    std::vector<std::string>& display = spec().job.display;
    if (std::find(display.begin(), display.end(), item) == display.end())
        display.emplace_back(item);
}

Status Parser::add_display(const Given& given) {
    std::istringstream items(given.value);
    for (std::string item; std::getline(items, item, ',');) {
        const bool svg = item.starts_with("map:svg=") && item.size() > 8;
        const bool known = item == "map" || item == "map:json" || item == "bindings" ||
                           item == "R" || item == "plan";
        if (!svg && !known)
            return error_in(
                "--display shows map, map:json, map:svg=FILE, bindings, R or plan, not " +
                    quote(item),
                given.value);
        spec().job.display.push_back(item);
    }
    return {};
}

Status Parser::set_resources(const Given& given) {
    auto text = shell::read_option_file(spec(), given.value, "resource set");
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

Status Parser::set_count(std::uint32_t& count, std::uint64_t least, const Given& given,
                         std::string_view noun) {
    const auto n = integer_of(given.value, least, std::numeric_limits<std::uint32_t>::max());
    if (!n)
        return error_in(given.name + " needs " + std::string(noun), given.value);
    count = static_cast<std::uint32_t>(*n);
    return {};
}

// --dependency TYPE:ID[,TYPE:ID...], the option given as often as needed.
Status Parser::add_dependencies(const Given& given) {
    using Type = Jobspec::Dependency::Type;
    const std::string& value = given.value;
    const std::string usage = given.name + " takes afterok:ID, afterany:ID or afternotok:ID";
    if (value.empty() || value.back() == ',')
        return error_in(usage, value);
    std::istringstream items(value);
    for (std::string item; std::getline(items, item, ',');) {
        const std::size_t colon = item.find(':');
        const std::string_view name = std::string_view(item).substr(0, colon);
        std::optional<Type> type;
        for (const Type known : {Type::kAfterOk, Type::kAfterAny, Type::kAfterNotOk})
            if (dependency_type_name(known) == name)
                type = known;
        if (!type || colon == std::string::npos)
            return error_in(usage + ", not " + quote(item), value);
        const auto id = integer_of(std::string_view(item).substr(colon + 1), 1,
                                   std::numeric_limits<std::uint64_t>::max());
        if (!id)
            return error_in(given.name + ": job ids are positive integers, not " +
                                quote(item.substr(colon + 1)),
                            value);
        spec().attributes.dependencies.push_back({*type, *id});
    }
    return {};
}

// --begin-time +DURATION (from now) or seconds since the epoch.
Status Parser::set_begin_time(const Given& given) {
    const std::string& value = given.value;
    const auto bad = [&] {
        return Status(error_in(
            given.name + " takes +DURATION (+30s, +5m, +1h) or seconds since the epoch", value));
    };
    if (value.starts_with('+')) {
        auto delay = parse_duration(domain_, std::string_view(value).substr(1));
        if (!delay)
            return bad();
        spec().attributes.begin_time = epoch_seconds() + seconds_of(*delay);
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

// One option of a segment, where its scope allows it.
Status Parser::apply(const Option& option, const Given& given) {
    const bool jobs = option.scope == Scope::kJob || option.scope == Scope::kScheduling;
    if (jobs && app_index() > 0)
        return error(given.name + " in app " + std::to_string(app_index()) +
                     "'s segment: it is the job's; give it before the first command");
    if (option.scope == Scope::kScheduling)
        command_.scheduling_options.push_back(given.name);
    return option.apply(*this, given);
}

// The option's values: in its own word, then the words after it.
Status Parser::read_option(const Found& found, int argc, char** argv, int& i) {
    Given given{found.name, "", ""};
    if (found.option->values == 0) {
        if (found.attached)
            return error_in(found.name + " takes no value",
                            found.name + (found.name.size() == 2 ? "" : "=") + *found.attached);
        return apply(*found.option, given);
    }
    std::vector<std::string> values;
    if (found.attached)
        values.push_back(*found.attached);
    while (static_cast<int>(values.size()) < found.option->values) {
        if (i + 1 >= argc)
            return error(found.name + (found.option->values == 2 ? " needs a name and a value"
                                                                 : " needs a value"));
        values.emplace_back(argv[++i]);
    }
    given.value = values[0];
    if (values.size() == 2)
        given.second = values[1];
    return apply(*found.option, given);
}

// The job's name defaults to its first program's, as listings show it. The
// first segment's -H beside a hostfile or R picks app 0's hosts among
// theirs, as in PRRTE.
void Parser::finish() {
    Jobspec::Job& job = spec().job;
    if (!job.hosts.empty() && (!job.hostfile.empty() || spec().resources.R))
        spec().apps.front().hosts = std::exchange(job.hosts, "");
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
    bool options_ended = false;  // `--` was given in this segment
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word == ":") {
            if (app().command.empty())
                return error("app " + std::to_string(app_index()) + " has no command");
            spec().apps.emplace_back();
            options_ended = false;
            continue;
        }
        if (!app().command.empty() || options_ended || word.size() < 2 || word[0] != '-') {
            app().command.push_back(word);
            continue;
        }
        if (word == "--") {
            options_ended = true;
            continue;
        }
        const auto found = find(word);
        if (!found)
            return error("unknown option " + quote(word) + see_help());
        if (auto status = read_option(*found, argc, argv, i); !status)
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

void print_notes(const RunCommand& run) {
    for (const std::string& note : run.notes)
        std::cerr << "gantry: " << note << '\n';
}

Status add_requirement(std::string_view domain, Json& constraint, std::string_view query) {
    auto compiled = parse_constraint_query(query);
    if (!compiled)
        return Error(std::string(domain), "--requires: " + compiled.error().str());
    if (constraint.empty())
        constraint = std::move(*compiled);
    else
        constraint = Json{{"and", Json::array({std::move(constraint), std::move(*compiled)})}};
    return {};
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

namespace {

// One item of `variable` (SLURM_TASKS_PER_NODE's syntax), "N" or "N(xM)",
// at `at` in `text`: N, M times.
Result<std::pair<std::uint64_t, std::uint64_t>> count_item(std::string_view variable,
                                                           std::string_view text, std::size_t at,
                                                           std::string_view item) {
    const auto bad = [&](std::size_t offset, const std::string& what) {
        return Error::at("run", std::string(variable) + ": " + what, text, at + offset);
    };
    std::uint64_t count = 0, repeat = 1;
    const char* end = item.data() + item.size();
    auto [after, failed] = std::from_chars(item.data(), end, count);
    if (failed != std::errc() || count == 0)
        return bad(0, "expected a count");
    std::string_view rest(after, static_cast<std::size_t>(end - after));
    if (!rest.empty()) {
        const std::size_t offset = item.size() - rest.size();
        if (!rest.starts_with("(x") || !rest.ends_with(")"))
            return bad(offset, "expected (xN) after the count");
        auto [stop, wrong] = std::from_chars(rest.data() + 2, end - 1, repeat);
        if (wrong != std::errc() || stop != end - 1 || repeat == 0)
            return bad(offset + 2, "expected a count of nodes");
    }
    return std::pair{count, repeat};
}

}  // namespace

Result<std::string> slurm_hosts(std::string_view nodelist, std::string_view per_node,
                                std::string_view variable) {
    auto hosts = Hostlist::parse(nodelist);
    if (!hosts)
        return Error("run", "SLURM_JOB_NODELIST: " + hosts.error().str());
    std::vector<std::uint64_t> counts;
    for (std::size_t at = 0; at <= per_node.size();) {
        const std::size_t comma = std::min(per_node.find(',', at), per_node.size());
        auto item = count_item(variable, per_node, at, per_node.substr(at, comma - at));
        if (!item)
            return item.error();
        if (counts.size() + item->second > hosts->count())
            break;  // said below, with the counts
        counts.insert(counts.end(), item->second, item->first);
        at = comma + 1;
    }
    if (counts.size() != hosts->count())
        return Error("run", std::string(variable) + " \"" + std::string(per_node) +
                                "\" does not give one count to each of the " +
                                std::to_string(hosts->count()) + " nodes of SLURM_JOB_NODELIST");
    std::string text;
    for (std::size_t i = 0; i < counts.size(); ++i)
        text += (i ? "," : "") + *hosts->nth(i) + ":" + std::to_string(counts[i]);
    return text;
}

}  // namespace gantry::cli
