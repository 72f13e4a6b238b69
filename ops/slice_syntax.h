// NumPy's index syntax as a string, for x:slice("1:5, ::2"): items separated by commas,
// each an integer, a slice start:stop[:step] with any part left out, or one "...".
#pragma once

#include <string_view>
#include <vector>

#include "runtime/ndarray.h"

namespace luda::ops {

// Parses `text` into index items, expanding "..." to as many whole slices as leave `ndim`
// axes covered. Errors give the column (1-based):
//   slice: syntax error in "1:x" at column 3: expected an integer, ':' or ',' but found 'x'
std::vector<IndexItem> parse_index_string(std::string_view text, int ndim);

}  // namespace luda::ops
