// A raw kernel's parameter list as the compiler reads it, so that macros, #if, -D options,
// typedefs and templates mean what they mean to the compiler that builds the kernel.
//
// A few templates appended to the source (reflection_support) turn the type of `&kernel`
// into a type whose mangled name spells both a code per parameter (a dtype, pointer or
// not, const pointee) and the parameter types themselves:
//   luda_r_probe<luda_r_codes<780, 11>, void (*)(float const*, float)>
// NVRTC gives that name as the lowered name of a name expression (reflection_expression);
// on the cpu target the shared object returns it from a function (cpu_reflection_entry),
// as typeid's name. read_reflection reads either back.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jit/raw/params.h"

namespace luda::jit {

// The templates, after the user's source (`cpu`: with the cpu target's call shim). Text
// starting with a #line directive, so that a failure inside it names luda_reflection.
// CUDA's __half and __nv_bfloat16 read as float16 and bfloat16 where the source included
// their headers; `luda_types`: luda's own C types (names_luda_types) read as their dtypes.
std::string reflection_support(bool cpu, bool luda_types = false);

// Whether a raw source names luda's C types luda_half, luda_bfloat16, luda_complex64 or
// luda_complex128 (a word of it, wherever it stands). Such a source is compiled after
// luda's kernel prelude, which defines them, their arithmetic and their conversions
// (docs/kinds.md, raw_kernel and raw_module).
bool names_luda_types(std::string_view source);

// The NVRTC name expression whose lowered name spells `kernel`'s parameter list (`kernel`
// as get_function names it: "add", "scale<float>", "ns::k").
std::string reflection_expression(std::string_view kernel);

// The cpu target's definitions for `kernel`: `extern "C" const char* <entry>_reflection()`
// and the executor's entry `<entry>_cpu(void* const* args)`, which calls the kernel with
// each argument read as its parameter's type (runtime/cpu_abi.h). `entry` is an
// identifier (cpu_entry_name).
std::string cpu_reflection_entry(std::string_view kernel, std::string_view entry);

// The parameter types in a lowered name or a typeid name of luda_r_probe; nullopt when
// it is not one (or spells a kernel that is not a plain function).
std::optional<std::vector<ParamType>> read_reflection(std::string_view mangled);

}  // namespace luda::jit
