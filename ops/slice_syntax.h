// NumPy's index syntax as a string, for x:slice("1:5, ::2") and x["[0, 1], [1, 0]"]: items
// separated by commas, each an integer, a slice start:stop[:step] with any part left out,
// "...", None or newaxis, True or False, or a list of integers or booleans (nested lists
// for more dimensions), as NumPy reads the literal inside x[...].
#pragma once

#include <string_view>
#include <vector>

#include "ops/indexing.h"

namespace luda::ops {

// Parses `text` into index items; a list becomes an array on `device` (int64, or bool
// when every element is True or False; NumPy's array of the list). Errors give the
// column (1-based):
//   slice: syntax error in "1:x" at column 3: expected an integer, ':' or ',' but found 'x'
std::vector<Index> parse_index_string(std::string_view text, Device device);

}  // namespace luda::ops
