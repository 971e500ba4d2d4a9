#include "shell/map_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "shell/fd.h"
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
