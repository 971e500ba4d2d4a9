#include "support/vectors.h"

#include "support/scratch.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gantry::test {

std::optional<std::filesystem::path> vectors_dir() {
    const char* env = std::getenv("GANTRY_VECTORS");
    const std::filesystem::path dir = env && *env ? env : GANTRY_DEFAULT_VECTORS;
    if (!std::filesystem::is_directory(dir))
        return std::nullopt;
    return dir;
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read " + path.string());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string write_temp_file(const std::string& name, const std::string& text) {
    static const ScratchDir files("gantry-test-files");
    const auto path = std::filesystem::path(files.path()) / name;
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out.flush())
        throw std::runtime_error("cannot write " + path.string());
    return path.string();
}

Json load_vector_json(const std::string& relative_path) {
    const auto dir = vectors_dir();
    if (!dir)
        throw std::runtime_error("conformance vectors not found");
    const std::string text = read_file(*dir / relative_path);
    auto parsed = parse_json(relative_path, text);
    if (!parsed)
        throw std::runtime_error(parsed.error().str());
    return std::move(parsed).value();
}

}  // namespace gantry::test
