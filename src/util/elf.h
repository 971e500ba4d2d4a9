// What a program links: the shared libraries an ELF file names (its
// DT_NEEDED entries), read from its bytes, as `ldd` would list them before
// resolving any. The shell asks it whether a program may speak PMIx.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace gantry {

// The DT_NEEDED names of a 64-bit little-endian ELF image, in file order;
// none for a static program. Errors name what is wrong and where: not such
// an ELF file ("elf: not a 64-bit little-endian ELF file"), or a header,
// segment or string that lies outside `image` ("elf: the dynamic segment
// at offset 4096 ends beyond the file's 2048 bytes").
Result<std::vector<std::string>> needed_libraries(std::string_view image);

}  // namespace gantry
