// Writes a seed corpus for one fuzz target from the conformance vectors:
// every string in the target's vector files, and for R every JSON object that
// looks like an R document. Usage: seed_corpus VECTORS_DIR OUT_DIR CONCEPT
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "util/json.h"

namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::vector<std::string>> kVectorFiles = {
    {"idset", {"idset.json", "idset_ops.json"}},
    {"hostlist", {"hostlist.json", "hostlist_ops.json"}},
    {"taskmap", {"taskmap.json", "taskmap_ops.json"}},
    {"rset", {"R/index.json", "rlist_ops.json", "rcalc.json"}},
    {"pmi", {"pmi_wire.json"}},
    {"jobspec", {}},        // no vectors: the committed corpus only
    {"shell_records", {}},  // the same
    {"util", {}},           // the same
    {"overlay", {}},        // the same
    {"constraint", {}},     // the same
    {"map_inputs", {}},     // the same
    {"shell_header", {}},   // the same
};

struct Writer {
    fs::path dir;
    std::size_t count = 0;
    void write(const std::string& bytes) {
        std::ofstream(dir / ("seed-" + std::to_string(count++)), std::ios::binary) << bytes;
    }
};

void collect(const gantry::Json& value, Writer& out) {
    if (value.is_string()) {
        out.write(value.get<std::string>());
    } else if (value.is_object()) {
        if (value.contains("version") || value.contains("execution"))
            out.write(gantry::to_compact(value));
        for (const auto& [key, child] : value.items())
            collect(child, out);
    } else if (value.is_array()) {
        if (!value.empty() && value[0].is_array())  // task maps are arrays of blocks
            out.write(gantry::to_compact(value));
        for (const auto& child : value)
            collect(child, out);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: seed_corpus VECTORS_DIR OUT_DIR CONCEPT\n");
        return 2;
    }
    const fs::path vectors = argv[1];
    const auto files = kVectorFiles.find(argv[3]);
    if (files == kVectorFiles.end()) {
        std::fprintf(stderr, "seed_corpus: no vector files for %s\n", argv[3]);
        return 2;
    }
    Writer out{fs::path(argv[2]) / argv[3]};
    fs::create_directories(out.dir);
    std::vector<fs::path> paths;
    for (const auto& name : files->second)
        paths.push_back(vectors / name);
    if (files->first == "rset")
        for (const auto& entry : fs::directory_iterator(vectors / "R"))
            paths.push_back(entry.path());
    for (const auto& path : paths) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        if (files->first == "rset")
            out.write(text.str());
        auto json = gantry::parse_json(path.string(), text.str());
        if (!json) {
            std::fprintf(stderr, "seed_corpus: %s\n", json.error().str().c_str());
            return 1;
        }
        collect(*json, out);
    }
    std::printf("seed_corpus: %zu seeds for %s\n", out.count, argv[3]);
    return 0;
}
