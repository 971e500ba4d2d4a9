// The jobspec: reading with one message per violation naming its JSON path,
// and the compact emission with every key in one fixed order.
#include "formats/jobspec.h"

#include <cctype>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <utility>

namespace gantry {

namespace {

constexpr std::string_view kDomain = "jobspec";
using OrderedJson = nlohmann::ordered_json;
using EnvRule = Jobspec::EnvRule;
using Dependency = Jobspec::Dependency;

constexpr std::pair<std::string_view, EnvRule::Kind> kEnvKinds[] = {
    {"set", EnvRule::Kind::kSet},
    {"remove", EnvRule::Kind::kRemove},
    {"file", EnvRule::Kind::kFile},
};

constexpr std::pair<std::string_view, Dependency::Type> kDependencyTypes[] = {
    {"afterok", Dependency::Type::kAfterOk},
    {"afterany", Dependency::Type::kAfterAny},
    {"afternotok", Dependency::Type::kAfterNotOk},
};

// --- Messages -------------------------------------------------------------

// `jobspec: <path>: <message>`, or `jobspec: <message>` for the document.
Error error_at(const std::string& path, std::string message) {
    return Error(std::string(kDomain), path.empty() ? std::move(message) : path + ": " + message);
}

// An error of another domain (R, with its idsets and hostlists) re-told at a
// JSON path, keeping its input and offset.
Error nested(const std::string& path, const Error& inner) {
    std::string message = path + ": " + inner.message();
    if (inner.input() && inner.offset())
        return Error::at(std::string(kDomain), std::move(message), *inner.input(), *inner.offset());
    if (inner.input())
        return Error::in(std::string(kDomain), std::move(message), *inner.input());
    return Error(std::string(kDomain), std::move(message));
}

// What a message says was found: a number as written, else the JSON type.
std::string found(const Json& value) {
    if (value.is_number_float() && !std::isfinite(value.get<double>()))
        return std::isnan(value.get<double>()) ? "NaN" : value > 0 ? "infinity" : "-infinity";
    return value.is_number() ? to_compact(value) : json_type_name(value);
}

Error expected(const std::string& path, std::string_view what, const Json& value) {
    return error_at(path, "expected " + std::string(what) + ", got " + found(value));
}

bool plain_name(std::string_view name) {
    if (name.empty())
        return false;
    for (const char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
            return false;
    return true;
}

// `path.key`, or `path["odd key"]` for a key that is not a plain name.
std::string member(const std::string& path, std::string_view key) {
    if (!plain_name(key))
        return path + "[" + quote(key) + "]";
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string element(const std::string& path, std::size_t index) {
    return path + "[" + std::to_string(index) + "]";
}

std::string joined(std::initializer_list<std::string_view> words) {
    std::string out;
    for (const std::string_view word : words)
        out += (out.empty() ? "" : ", ") + std::string(word);
    return out;
}

// --- Values ---------------------------------------------------------------

Result<std::string> read_string(const Json& value, const std::string& path) {
    if (!value.is_string())
        return expected(path, "a string", value);
    const auto& text = value.get_ref<const std::string&>();
    if (text.find('\0') != std::string::npos)
        return error_at(path, "contains a NUL byte");
    return text;
}

Result<bool> read_bool(const Json& value, const std::string& path) {
    if (!value.is_boolean())
        return expected(path, "a boolean", value);
    return value.get<bool>();
}

// A non-negative integer that fits 32 bits.
Result<std::uint32_t> read_count(const Json& value, const std::string& path) {
    constexpr std::string_view kWhat = "a non-negative integer";
    if (!value.is_number_integer())
        return expected(path, kWhat, value);
    if (!value.is_number_unsigned() && value.get<std::int64_t>() < 0)
        return expected(path, kWhat, value);
    const auto count = value.get<std::uint64_t>();
    if (count > std::numeric_limits<std::uint32_t>::max())
        return error_at(path, "too large: " + to_compact(value) + " (at most " +
                                  std::to_string(std::numeric_limits<std::uint32_t>::max()) + ")");
    return static_cast<std::uint32_t>(count);
}

// A finite number >= 0 (seconds); -0 is read as 0.
Result<double> read_seconds(const Json& value, const std::string& path, std::string_view what) {
    if (!value.is_number())
        return expected(path, what, value);
    const double seconds = value.get<double>();
    if (!std::isfinite(seconds) || seconds < 0)
        return expected(path, what, value);
    return seconds == 0 ? 0.0 : seconds;
}

Result<std::vector<std::string>> read_strings(const Json& value, const std::string& path) {
    if (!value.is_array())
        return expected(path, "an array of strings", value);
    std::vector<std::string> strings;
    for (std::size_t i = 0; i < value.size(); ++i) {
        auto text = read_string(value[i], element(path, i));
        if (!text)
            return text.error();
        strings.push_back(std::move(*text));
    }
    return strings;
}

// The keys of one JSON object, read in the documented order; after the first
// violation nothing more is read, so that the message is about that one.
class Fields {
public:
    // `value` must be an object with no key outside `keys`.
    Fields(const Json& value, std::string path, std::initializer_list<std::string_view> keys)
        : object_(value), path_(std::move(path)) {
        if (!value.is_object()) {
            fail(expected(path_, "an object", value));
            return;
        }
        for (const auto& [key, child] : value.items()) {
            bool known = false;
            for (const std::string_view name : keys)
                known = known || key == name;
            if (!known) {
                fail(error_at(path_,
                              "unknown key " + quote(key) + " (expected " + joined(keys) + ")"));
                return;
            }
        }
    }

    bool ok() const { return !error_; }
    const Error& error() const { return *error_; }
    void fail(Error e) {
        if (!error_)
            error_ = std::move(e);
    }
    std::string path_of(std::string_view key) const { return member(path_, key); }

    // The value of `key`; null when it is absent or after a violation.
    const Json* find(std::string_view key) const {
        if (error_)
            return nullptr;
        const auto it = object_.find(key);
        return it == object_.end() ? nullptr : &*it;
    }
    const Json* require(std::string_view key) {
        const Json* value = find(key);
        if (!value && ok())
            fail(error_at(path_, "missing key " + quote(key)));
        return value;
    }

    // Reads `key` with `reader` into `out` when present.
    template <class T, class Reader>
    void read(std::string_view key, T& out, Reader reader) {
        if (const Json* value = find(key)) {
            auto result = reader(*value, path_of(key));
            if (result)
                out = std::move(*result);
            else
                fail(result.error());
        }
    }
    void string(std::string_view key, std::string& out) { read(key, out, read_string); }
    void boolean(std::string_view key, bool& out) { read(key, out, read_bool); }
    void count(std::string_view key, std::uint32_t& out) { read(key, out, read_count); }
    void strings(std::string_view key, std::vector<std::string>& out) {
        read(key, out, read_strings);
    }
    void seconds(std::string_view key, double& out, std::string_view what) {
        read(key, out, [what](const Json& value, const std::string& path) {
            return read_seconds(value, path, what);
        });
    }

private:
    const Json& object_;
    std::string path_;
    std::optional<Error> error_;
};

// --- Parts ----------------------------------------------------------------

Result<EnvRule> read_env_rule(const Json& value, const std::string& path) {
    Fields fields(value, path, {"set", "remove", "file"});
    if (!fields.ok())
        return fields.error();
    if (value.size() != 1) {
        std::string keys;
        std::size_t n = 0;
        for (const auto& [key, text] : value.items())
            keys += (n++ == 0 ? "" : n == value.size() ? " and " : ", ") + key;
        return error_at(path, "expected exactly one of set, remove, file, got " +
                                  (keys.empty() ? std::string("none") : keys));
    }
    const auto only = value.begin();
    const std::string& key = only.key();
    EnvRule rule;
    for (const auto& [name, kind] : kEnvKinds)
        if (key == name)
            rule.kind = kind;
    auto parsed = read_string(only.value(), member(path, key));
    if (!parsed)
        return parsed.error();
    rule.text = std::move(*parsed);
    return rule;
}

Result<std::vector<EnvRule>> read_env(const Json& value, const std::string& path) {
    if (!value.is_array())
        return expected(path, "an array", value);
    std::vector<EnvRule> rules;
    for (std::size_t i = 0; i < value.size(); ++i) {
        auto rule = read_env_rule(value[i], element(path, i));
        if (!rule)
            return rule.error();
        rules.push_back(std::move(*rule));
    }
    return rules;
}

Result<std::vector<std::string>> read_command(const Json& value, const std::string& path) {
    auto command = read_strings(value, path);
    if (!command)
        return command;
    if (command->empty())
        return error_at(path, "empty command");
    if (command->front().empty())
        return error_at(element(path, 0), "empty program name");
    return command;
}

Result<Jobspec::App> read_app(const Json& value, const std::string& path, bool first) {
    Fields fields(
        value, path,
        {"command", "ntasks", "map_by", "rank_by", "bind_to", "hosts", "hostfile", "env", "cwd"});
    Jobspec::App app;
    if (const Json* command = fields.require("command")) {
        auto parsed = read_command(*command, fields.path_of("command"));
        if (parsed)
            app.command = std::move(*parsed);
        else
            fields.fail(parsed.error());
    }
    fields.count("ntasks", app.ntasks);
    fields.string("map_by", app.map_by);
    fields.string("rank_by", app.rank_by);
    fields.string("bind_to", app.bind_to);
    fields.string("hosts", app.hosts);
    fields.string("hostfile", app.hostfile);
    fields.read("env", app.env, read_env);
    fields.string("cwd", app.cwd);
    if (!fields.ok())
        return fields.error();
    // On the command line, the first segment's --hostfile is the job's.
    if (first && !app.hostfile.empty())
        return error_at(fields.path_of("hostfile"),
                        "app 0's hostfile is the job's: give job.hostfile");
    return app;
}

Result<std::vector<Jobspec::App>> read_apps(const Json& value, const std::string& path) {
    if (!value.is_array())
        return expected(path, "an array", value);
    if (value.empty())
        return error_at(path, "expected at least one app");
    std::vector<Jobspec::App> apps;
    for (std::size_t i = 0; i < value.size(); ++i) {
        auto app = read_app(value[i], element(path, i), i == 0);
        if (!app)
            return app.error();
        apps.push_back(std::move(*app));
    }
    return apps;
}

Result<Jobspec::Job> read_job(const Json& value, const std::string& path) {
    Fields fields(value, path,
                  {"hosts", "hostfile", "rankfile", "topology", "oversubscribe", "nolocal",
                   "hwthread_cpus", "display"});
    Jobspec::Job job;
    fields.string("hosts", job.hosts);
    fields.string("hostfile", job.hostfile);
    fields.string("rankfile", job.rankfile);
    fields.string("topology", job.topology);
    fields.boolean("oversubscribe", job.oversubscribe);
    fields.boolean("nolocal", job.nolocal);
    fields.boolean("hwthread_cpus", job.hwthread_cpus);
    fields.strings("display", job.display);
    if (!fields.ok())
        return fields.error();
    return job;
}

Result<std::optional<ResourceSet>> read_R(const Json& value, const std::string& path) {
    if (value.is_null())
        return std::optional<ResourceSet>{};
    if (!value.is_object())
        return expected(path, "an R document (a JSON object) or null", value);
    auto set = ResourceSet::from_json(value);
    if (!set)
        return nested(path, set.error());
    return std::optional<ResourceSet>(std::move(*set));
}

Result<Json> read_constraint(const Json& value, const std::string& path) {
    if (!value.is_object())
        return expected(path, "an RFC 31 constraint (a JSON object)", value);
    return value;
}

Result<Jobspec::Resources> read_resources(const Json& value, const std::string& path) {
    Fields fields(
        value, path,
        {"nodes", "ntasks", "cores_per_task", "gpus_per_task", "exclusive", "constraint", "R"});
    Jobspec::Resources resources;
    fields.count("nodes", resources.nodes);
    fields.count("ntasks", resources.ntasks);
    fields.count("cores_per_task", resources.cores_per_task);
    if (fields.ok() && resources.cores_per_task == 0)
        fields.fail(error_at(fields.path_of("cores_per_task"), "must be at least 1, got 0"));
    fields.count("gpus_per_task", resources.gpus_per_task);
    fields.boolean("exclusive", resources.exclusive);
    fields.read("constraint", resources.constraint, read_constraint);
    fields.read("R", resources.R, read_R);
    if (!fields.ok())
        return fields.error();
    return resources;
}

Result<std::map<std::string, std::string>> read_environment(const Json& value,
                                                            const std::string& path) {
    if (!value.is_object())
        return expected(path, "an object of strings", value);
    std::map<std::string, std::string> environment;
    for (const auto& [name, text] : value.items()) {
        if (name.empty() || name.find_first_of(std::string_view("=\0", 2)) != std::string::npos)
            return error_at(path, "invalid variable name " + quote(name));
        auto parsed = read_string(text, member(path, name));
        if (!parsed)
            return parsed.error();
        environment.emplace(name, std::move(*parsed));
    }
    return environment;
}

Result<int> read_urgency(const Json& value, const std::string& path) {
    const std::string what = "an integer from " + std::to_string(Jobspec::kUrgencyHold) + " to " +
                             std::to_string(Jobspec::kUrgencyExpedite);
    if (!value.is_number_integer())
        return expected(path, what, value);
    if (value.is_number_unsigned() ? value.get<std::uint64_t>() > Jobspec::kUrgencyExpedite
                                   : value.get<std::int64_t>() < Jobspec::kUrgencyHold ||
                                         value.get<std::int64_t>() > Jobspec::kUrgencyExpedite)
        return expected(path, what, value);
    return value.get<int>();
}

Result<Dependency> read_dependency(const Json& value, const std::string& path) {
    Fields fields(value, path, {"type", "id"});
    Dependency dependency;
    if (const Json* type = fields.require("type")) {
        auto name = read_string(*type, fields.path_of("type"));
        if (!name) {
            fields.fail(name.error());
        } else {
            bool known = false;
            for (const auto& [spelling, kind] : kDependencyTypes)
                if (*name == spelling) {
                    dependency.type = kind;
                    known = true;
                }
            if (!known)
                fields.fail(error_at(fields.path_of("type"),
                                     "unknown dependency type " + quote(*name) +
                                         " (expected afterok, afterany, afternotok)"));
        }
    }
    if (const Json* id = fields.require("id")) {
        if (!id->is_number_integer() || !id->is_number_unsigned() || id->get<std::uint64_t>() == 0)
            fields.fail(expected(fields.path_of("id"), "a positive integer", *id));
        else
            dependency.id = id->get<std::uint64_t>();
    }
    if (!fields.ok())
        return fields.error();
    return dependency;
}

Result<std::vector<Dependency>> read_dependencies(const Json& value, const std::string& path) {
    if (!value.is_array())
        return expected(path, "an array", value);
    std::vector<Dependency> dependencies;
    for (std::size_t i = 0; i < value.size(); ++i) {
        auto dependency = read_dependency(value[i], element(path, i));
        if (!dependency)
            return dependency.error();
        dependencies.push_back(*dependency);
    }
    return dependencies;
}

Result<Jobspec::Attributes> read_attributes(const Json& value, const std::string& path) {
    Fields fields(value, path, {"name",       "cwd",          "environment",
                                "time_limit", "kill_timeout", "kill_on_bad_exit",
                                "urgency",    "begin_time",   "dependencies",
                                "label_io",   "output",       "error",
                                "input",      "unbuffered",   "timestamp_output",
                                "output_dir", "merge_stderr", "rlimits",
                                "umask",      "mpi"});
    constexpr std::string_view kDuration = "a non-negative number of seconds";
    Jobspec::Attributes attributes;
    fields.string("name", attributes.name);
    fields.string("cwd", attributes.cwd);
    fields.read("environment", attributes.environment, read_environment);
    fields.seconds("time_limit", attributes.time_limit, kDuration);
    fields.seconds("kill_timeout", attributes.kill_timeout, kDuration);
    fields.boolean("kill_on_bad_exit", attributes.kill_on_bad_exit);
    fields.read("urgency", attributes.urgency, read_urgency);
    fields.seconds("begin_time", attributes.begin_time,
                   "a non-negative time in seconds since the epoch");
    fields.read("dependencies", attributes.dependencies, read_dependencies);
    fields.boolean("label_io", attributes.label_io);
    fields.string("output", attributes.output);
    fields.string("error", attributes.error);
    fields.string("input", attributes.input);
    fields.boolean("unbuffered", attributes.unbuffered);
    fields.boolean("timestamp_output", attributes.timestamp_output);
    fields.string("output_dir", attributes.output_dir);
    fields.boolean("merge_stderr", attributes.merge_stderr);
    fields.strings("rlimits", attributes.rlimits);
    fields.string("umask", attributes.umask);
    fields.string("mpi", attributes.mpi);
    if (!fields.ok())
        return fields.error();
    return attributes;
}

// --- Emission -------------------------------------------------------------

// Whole seconds as an integer (`5`), others as a number with a fraction.
OrderedJson seconds_json(double seconds) {
    constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
    if (seconds >= 0 && seconds < kExactIntegers && seconds == std::floor(seconds))
        return static_cast<std::uint64_t>(seconds);
    return seconds;
}

OrderedJson strings_json(const std::vector<std::string>& strings) {
    OrderedJson array = OrderedJson::array();
    for (const std::string& text : strings)
        array.push_back(text);
    return array;
}

OrderedJson env_json(const std::vector<EnvRule>& rules) {
    OrderedJson array = OrderedJson::array();
    for (const EnvRule& rule : rules) {
        OrderedJson entry = OrderedJson::object();
        for (const auto& [name, kind] : kEnvKinds)
            if (rule.kind == kind)
                entry[std::string(name)] = rule.text;
        array.push_back(std::move(entry));
    }
    return array;
}

OrderedJson app_json(const Jobspec::App& app) {
    OrderedJson out = OrderedJson::object();
    out["command"] = strings_json(app.command);
    out["ntasks"] = app.ntasks;
    out["map_by"] = app.map_by;
    out["rank_by"] = app.rank_by;
    out["bind_to"] = app.bind_to;
    out["hosts"] = app.hosts;
    out["hostfile"] = app.hostfile;
    out["env"] = env_json(app.env);
    out["cwd"] = app.cwd;
    return out;
}

OrderedJson job_json(const Jobspec::Job& job) {
    OrderedJson out = OrderedJson::object();
    out["hosts"] = job.hosts;
    out["hostfile"] = job.hostfile;
    out["rankfile"] = job.rankfile;
    out["topology"] = job.topology;
    out["oversubscribe"] = job.oversubscribe;
    out["nolocal"] = job.nolocal;
    out["hwthread_cpus"] = job.hwthread_cpus;
    out["display"] = strings_json(job.display);
    return out;
}

OrderedJson resources_json(const Jobspec::Resources& resources) {
    OrderedJson out = OrderedJson::object();
    out["nodes"] = resources.nodes;
    out["ntasks"] = resources.ntasks;
    out["cores_per_task"] = resources.cores_per_task;
    out["gpus_per_task"] = resources.gpus_per_task;
    out["exclusive"] = resources.exclusive;
    out["constraint"] = OrderedJson::parse(resources.constraint.dump());
    // R's own emission, so that its keys keep RFC order.
    out["R"] = resources.R ? OrderedJson::parse(resources.R->encode()) : OrderedJson(nullptr);
    return out;
}

OrderedJson attributes_json(const Jobspec::Attributes& attributes) {
    OrderedJson out = OrderedJson::object();
    out["name"] = attributes.name;
    out["cwd"] = attributes.cwd;
    OrderedJson environment = OrderedJson::object();
    for (const auto& [name, value] : attributes.environment)
        environment[name] = value;
    out["environment"] = std::move(environment);
    out["time_limit"] = seconds_json(attributes.time_limit);
    out["kill_timeout"] = seconds_json(attributes.kill_timeout);
    out["kill_on_bad_exit"] = attributes.kill_on_bad_exit;
    out["urgency"] = attributes.urgency;
    out["begin_time"] = seconds_json(attributes.begin_time);
    OrderedJson dependencies = OrderedJson::array();
    for (const Dependency& dependency : attributes.dependencies)
        dependencies.push_back(
            OrderedJson{{"type", dependency_type_name(dependency.type)}, {"id", dependency.id}});
    out["dependencies"] = std::move(dependencies);
    out["label_io"] = attributes.label_io;
    out["output"] = attributes.output;
    out["error"] = attributes.error;
    out["input"] = attributes.input;
    out["unbuffered"] = attributes.unbuffered;
    out["timestamp_output"] = attributes.timestamp_output;
    out["output_dir"] = attributes.output_dir;
    out["merge_stderr"] = attributes.merge_stderr;
    out["rlimits"] = strings_json(attributes.rlimits);
    out["umask"] = attributes.umask;
    out["mpi"] = attributes.mpi;
    return out;
}

OrderedJson document_json(const Jobspec& spec) {
    OrderedJson document = OrderedJson::object();
    document["version"] = Jobspec::kVersion;
    OrderedJson apps = OrderedJson::array();
    for (const Jobspec::App& app : spec.apps)
        apps.push_back(app_json(app));
    document["apps"] = std::move(apps);
    document["job"] = job_json(spec.job);
    document["resources"] = resources_json(spec.resources);
    document["attributes"] = attributes_json(spec.attributes);
    return document;
}

}  // namespace

std::string_view dependency_type_name(Jobspec::Dependency::Type type) {
    for (const auto& [name, kind] : kDependencyTypes)
        if (kind == type)
            return name;
    return "afterok";
}

Result<Jobspec> Jobspec::from_json(const Json& document) {
    if (!document.is_object())
        return error_at("", "expected a jobspec (a JSON object), got " + json_type_name(document));
    // The version first: another version may have other keys.
    const auto version = document.find("version");
    if (version == document.end())
        return error_at("", "missing key \"version\"");
    if (!version->is_number_integer())
        return expected("version", "an integer", *version);
    if (*version != kVersion)
        return error_at("version", "unsupported version " + to_compact(*version) + " (expected " +
                                       std::to_string(kVersion) + ")");
    Fields fields(document, "", {"version", "apps", "job", "resources", "attributes"});
    Jobspec spec;
    if (const Json* apps = fields.require("apps")) {
        auto parsed = read_apps(*apps, "apps");
        if (parsed)
            spec.apps = std::move(*parsed);
        else
            fields.fail(parsed.error());
    }
    fields.read("job", spec.job, read_job);
    fields.read("resources", spec.resources, read_resources);
    fields.read("attributes", spec.attributes, read_attributes);
    if (!fields.ok())
        return fields.error();
    // App 0's own hosts pick among those of a hostfile or R, as the first
    // segment's -H does with --hostfile; else its -H is the job's.
    if (!spec.apps.front().hosts.empty() && spec.job.hostfile.empty() && !spec.resources.R)
        return error_at("apps[0].hosts",
                        "app 0's hosts pick among job.hostfile's or resources.R's: without "
                        "either, give job.hosts");
    return spec;
}

Result<Jobspec> Jobspec::parse(std::string_view text) {
    auto document = parse_json(kDomain, text);
    if (!document)
        return document.error();
    return from_json(*document);
}

std::string Jobspec::encode() const {
    return document_json(*this).dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

Json Jobspec::to_json() const {
    return Json(document_json(*this));
}

std::optional<InstanceRefusal> instance_refusal(const Jobspec& spec) {
    using Reason = InstanceRefusal::Reason;
    if (!spec.job.topology.empty())
        return InstanceRefusal{Reason::kSimulatedTopology, 0};
    for (std::size_t k = 1; k < spec.apps.size(); ++k) {
        if (spec.apps[k].ntasks == 0 || spec.apps[0].ntasks == 0)
            return InstanceRefusal{Reason::kAppWithoutNtasks, spec.apps[k].ntasks == 0 ? k : 0};
    }
    return std::nullopt;
}

}  // namespace gantry
