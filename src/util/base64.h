// Base64 (RFC 4648, standard alphabet, with padding): how the API carries
// the bytes of a task's output, which need not be UTF-8, inside JSON.
#pragma once

#include <string>
#include <string_view>

#include "util/error.h"

namespace gantry {

std::string base64_encode(std::string_view bytes);
// Refuses a length that is not a multiple of 4, a character outside the
// alphabet, padding anywhere but at the end (`base64: unexpected '*' at
// offset 5`) and a text that is not the one encoding of its bytes, whose
// last symbol before the padding has bits set that no byte uses
// (`base64: non-zero padding bits in 'm' at offset 2`).
Result<std::string> base64_decode(std::string_view text);

}  // namespace gantry
