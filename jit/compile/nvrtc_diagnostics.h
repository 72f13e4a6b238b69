// NVRTC failures on generated kernels, told at the Lua line that the #line directives of
// the generated code name, in the form of every other located error:
//
//   hist.lua:14:3: compile error: array is too large
//       local scratch = cuda.shared.array(2305843009213693952, "float64")
//       ^
//
// followed by NVRTC's whole message (log, options, numbered source), so nothing is lost.
#pragma once

#include "dsl/compile.h"
#include "jit/compile/nvrtc.h"

namespace luda::jit {

// The error to throw for `e`: located at the first error of the compiler's log (NVRTC's,
// or a host compiler's `file:line:col: error: msg`) that names `chunk` (or at the use of a
// macro whose body the error is in), else `e` as it is. The column is the line's first
// non-blank one, or with `compiler_columns` (a chunk of C++, not Lua) the compiler's.
CompileError at_lua_line(const CompileError& e, const dsl::Chunk& chunk, bool compiler_columns = false);

}  // namespace luda::jit
