// Conformance vectors from ../shared/vectors (or $GANTRY_VECTORS). They are
// not part of the project: a test that needs them skips itself, loudly, when
// the folder is absent.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "util/json.h"

namespace gantry::test {

// The vectors folder, or nothing when it does not exist.
std::optional<std::filesystem::path> vectors_dir();

// Reads and parses a JSON file under the vectors folder; fails the test on
// a read or parse error.
Json load_vector_json(const std::string& relative_path);

// Reads a file's bytes.
std::string read_file(const std::filesystem::path& path);

// Writes `text` to a file called `name` in this test program's scratch
// directory (removed when the program exits), for a test input such as a
// hostfile; returns its path.
std::string write_temp_file(const std::string& name, const std::string& text);

}  // namespace gantry::test

// Skips the current test, with a warning on stderr, when the vectors are absent.
#define GANTRY_REQUIRE_VECTORS()                                                \
    do {                                                                        \
        if (!::gantry::test::vectors_dir()) {                                   \
            std::fprintf(stderr,                                                \
                         "*** SKIPPED: conformance vectors not found (set "     \
                         "GANTRY_VECTORS or provide ../shared/vectors) ***\n"); \
            GTEST_SKIP() << "conformance vectors not found";                    \
        }                                                                       \
    } while (0)
