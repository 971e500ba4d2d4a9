#include "shell/map_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "shell/fd.h"
#include "util/base64.h"
#include "util/file.h"

namespace gantry::shell {
namespace {

// The options of the jobspec are `gantry run`'s: their messages too.
constexpr std::string_view kDomain = "run";

// The whole file at `path`, or the system's reason it cannot be read, for
// the mapper to report where it needs the file.
FileText file_text_at(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd)
        return FileText{{}, std::strerror(errno)};
    FileText file;
    if (const int error = read_all(fd.get(), file.text))
        return FileText{{}, std::strerror(error)};
    return file;
}

}  // namespace

bool names_hosts(const Jobspec& spec) {
    const auto app_names = [](const Jobspec::App& app) {
        return !app.hosts.empty() || !app.hostfile.empty();
    };
    return !spec.job.hosts.empty() || !spec.job.hostfile.empty() ||
           std::any_of(spec.apps.begin(), spec.apps.end(), app_names);
}

Result<std::string> read_option_file(const Jobspec& spec, std::string_view path,
                                     std::string_view what) {
    return read_named_file(std::string(kDomain), what, jobspec_path(spec, path), path);
}

MapInputs read_map_inputs(const Jobspec& spec) {
    MapInputs inputs;
    for (const std::string& path : jobspec_files(spec))
        inputs.files.emplace(path, file_text_at(path));
    inputs.hostname = local_hostname();
    // Finding every address of the machine costs a walk of its interfaces:
    // only for a jobspec that names hosts.
    if (names_hosts(spec))
        inputs.names = local_names();
    return inputs;
}

Json map_inputs_to_json(const MapInputs& inputs) {
    Json files = Json::array();
    for (const auto& [path, file] : inputs.files)
        files.push_back(file.unreadable
                            ? Json{{"path", path}, {"unreadable", *file.unreadable}}
                            : Json{{"path", path}, {"base64", base64_encode(file.text)}});
    return {{"hostname", inputs.hostname}, {"names", inputs.names}, {"files", std::move(files)}};
}

namespace {

Error map_inputs_error(const std::string& what) {
    return Error("map_inputs", what);
}

// A string member of `object`, or why not.
Result<std::string> string_member(const Json& object, const std::string& name,
                                  const std::string& where) {
    const auto found = object.find(name);
    if (found == object.end() || !found->is_string())
        return map_inputs_error(where + "\"" + name + "\": expected a string, not " +
                                json_type_name(found == object.end() ? Json() : *found));
    return found->get<std::string>();
}

Result<FileText> file_text_of(const Json& entry, const std::string& where) {
    const auto wrong = [&where] {
        return map_inputs_error(where + R"(: expected {"path":TEXT,"base64":TEXT} or )"
                                        R"({"path":TEXT,"unreadable":TEXT})");
    };
    if (!entry.is_object() || entry.size() != 2 || !entry.contains("path"))
        return wrong();
    if (const auto unreadable = entry.find("unreadable"); unreadable != entry.end()) {
        if (!unreadable->is_string())
            return wrong();
        return FileText{{}, unreadable->get<std::string>()};
    }
    const auto encoded = entry.find("base64");
    if (encoded == entry.end() || !encoded->is_string())
        return wrong();
    auto text = base64_decode(encoded->get<std::string>());
    if (!text)
        return map_inputs_error(where + ".base64: " + text.error().str());
    return FileText{std::move(*text), std::nullopt};
}

}  // namespace

Result<MapInputs> map_inputs_from_json(const Json& json) {
    if (!json.is_object())
        return map_inputs_error("expected an object, not " + json_type_name(json));
    MapInputs inputs;
    auto hostname = string_member(json, "hostname", "");
    if (!hostname)
        return hostname.error();
    inputs.hostname = std::move(*hostname);
    const auto names = json.find("names");
    if (names == json.end() || !names->is_array())
        return map_inputs_error("\"names\": expected an array, not " +
                                json_type_name(names == json.end() ? Json() : *names));
    for (const Json& name : *names) {
        if (!name.is_string())
            return map_inputs_error("\"names\": expected strings, found " + json_type_name(name));
        inputs.names.push_back(name.get<std::string>());
    }
    const auto files = json.find("files");
    if (files == json.end() || !files->is_array())
        return map_inputs_error("\"files\": expected an array, not " +
                                json_type_name(files == json.end() ? Json() : *files));
    for (std::size_t k = 0; k < files->size(); ++k) {
        const std::string where = "\"files\"[" + std::to_string(k) + "]";
        const Json& entry = (*files)[k];
        auto text = file_text_of(entry, where);
        if (!text)
            return text.error();
        auto path = string_member(entry, "path", where + ".");
        if (!path)
            return path.error();
        inputs.files.insert_or_assign(std::move(*path), std::move(*text));
    }
    return inputs;
}

Result<Topology> jobspec_topology(const Jobspec& spec) {
    const std::string& topology = spec.job.topology;
    if (topology.empty())
        return Topology::local();
    if (const std::string file = jobspec_path(spec, topology); std::filesystem::exists(file))
        return Topology::from_xml(file);
    return Topology::from_file_or_synthetic(topology);
}

Status write_display_files(const DisplayOutput& output) {
    for (const DisplayOutput::File& written : output.files) {
        std::ofstream file(written.path);
        file << written.contents;
        if (!file)
            return Error(std::string(kDomain), "cannot write the map to " + quote(written.path));
    }
    return {};
}

}  // namespace gantry::shell
