// What the source text alone says of a function: a function given as text
// (`luda.cuda.jit([[ function(x, out) ... end ]])`) as a FunctionSource, and the name the
// text gives a function. No Lua state: stdlib/function_source.h finds the text of a Lua
// function, these read it.
#pragma once

#include <string>

#include "dsl/compile.h"

namespace luda::dsl {

// A function given as source text: luda.cuda.jit([[ function(x, out) ... end ]]). Its
// chunk is named as Lua names a string chunk: [string "function(x, out)..."].
FunctionSource text_source(std::string text);

// The name the source gives the function ("add_kernel" for `local function add_kernel(`,
// `local add_kernel = cuda.jit(function(`, `function M.add_kernel(`, `add = function(`),
// or "" when none shows.
std::string function_name(const FunctionSource& source);

}  // namespace luda::dsl
