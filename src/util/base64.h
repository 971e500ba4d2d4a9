// Bytes inside JSON, as the API carries a task's output and stdin: the text
// itself where it is UTF-8, else in base64 (RFC 4648, standard alphabet,
// with padding).
#pragma once

#include <string>
#include <string_view>

#include "util/error.h"
#include "util/json.h"

namespace gantry {

std::string base64_encode(std::string_view bytes);
// Refuses a length that is not a multiple of 4, a character outside the
// alphabet, padding anywhere but at the end (`base64: unexpected '*' at
// offset 5`) and a text that is not the one encoding of its bytes, whose
// last symbol before the padding has bits set that no byte uses
// (`base64: non-zero padding bits in 'm' at offset 2`).
Result<std::string> base64_decode(std::string_view text);

// Puts `bytes` in `object` as flux's output events hold them: "data" is the
// text itself when it is UTF-8 (most output, which then costs no encoding),
// else its base64, with "encoding":"base64".
void put_data(Json& object, std::string_view bytes);
// The bytes put_data put in `object` (none without "data"). Refuses a
// "data" that is not a string, an "encoding" other than "base64", and bad
// base64 (`data: base64: unexpected '*' at offset 5`).
Result<std::string> data_of(const Json& object);

}  // namespace gantry
