// The query syntax of `--requires` (RFC 35, as flux's --requires reads it)
// compiled to an RFC 31 constraint, the JSON a jobspec carries and
// ResourceSet::constraint_ranks evaluates:
//
//   gpu                      {"properties":["gpu"]}
//   gpu,-big                 {"properties":["gpu","^big"]}
//   host:n[1-4] rank:0-3     {"and":[{"hostlist":["n[1-4]"]},{"ranks":["0-3"]}]}
//   a|b&c                    {"or":[{"properties":["a"]},{"and":[...b, c...]}]}
//   not a, -a                {"not":[{"properties":["a"]}]}
//
// Terms are `operator:operand` or a bare operand (properties); operators
// properties (property), hostlist (host, hosts), ranks (rank). AND is `&`,
// `&&`, `and` or a blank between terms; OR is `|`, `||`, `or`; NOT is
// `not`, or `-` before a term. AND binds tighter than OR, NOT tighter than
// AND; parentheses group; quotes ('...' or "...") keep blanks and reserved
// characters in an operand. Syntax, examples and messages:
// docs/formats/constraint.md.
#pragma once

#include <string_view>

#include "util/error.h"
#include "util/json.h"

namespace gantry {

// The RFC 31 constraint `text` asks for, or one line naming the place:
// `constraint: expected a term after 'or', found the end of the query at
// offset 5 in "gpu |"`. Operands are checked (property names, hostlists,
// idsets), not whether the instance has them.
Result<Json> parse_constraint_query(std::string_view text);

}  // namespace gantry
