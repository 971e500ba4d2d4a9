// Files for a test: a scratch directory that goes away with the test, and
// the two questions tests ask of a path.
#pragma once

#include <string>

namespace gantry::test {

// A fresh directory under /tmp, removed with everything in it when the
// object goes. `prefix` names the test in the directory's name, so that a
// directory left by a crashed test says whose it was.
class ScratchDir {
public:
    explicit ScratchDir(const std::string& prefix = "gantry-test");
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Whether anything (a dangling symlink included) is at `path`.
bool exists(const std::string& path);

// The whole content of the file at `path`, bytes as they are; "" when it
// cannot be read.
std::string read_file(const std::string& path);

}  // namespace gantry::test
