// The parameter list of an `extern "C" __global__` kernel, read from CUDA C++ source so
// that raw-kernel arguments can be checked and converted before launch.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dtype.h"

namespace luda::jit {

struct ParamType {
  enum class Kind { Pointer, Scalar, Opaque };  // Opaque: a struct by value, unknown type
  Kind kind = Kind::Opaque;
  std::optional<DType> dtype;  // the pointee for Pointer (nullopt for void*/struct*), the type for Scalar
  bool is_const = false;       // pointee constness
  std::string spelling;        // "const float* __restrict__", as written (whitespace collapsed)
};

struct KernelParam {
  std::string name;  // may be empty for an unnamed parameter
  ParamType type;
};

struct KernelSignature {
  std::string name;
  bool extern_c = false;
  std::vector<KernelParam> params;
};

// Finds `__global__ void <name>(...)` (any order of extern "C", __launch_bounds__, etc.)
// outside comments and strings. nullopt when there is no such definition or its list
// cannot be read (template kernels, macros in the list): callers then pass arguments as
// CuPy does. Scalar spellings understood: bool, char/short/int/long/long long with
// signed/unsigned, size_t, ptrdiff_t, intN_t/uintN_t, float, double.
std::optional<KernelSignature> find_kernel_signature(std::string_view source, std::string_view name);

// Names of all __global__ functions defined in the source, in order, each once.
std::vector<std::string> list_kernels(std::string_view source);

// A __global__ function definition as the source shows it.
struct KernelDefinition {
  std::string name;
  bool extern_c = false;     // `extern "C" __global__` or inside `extern "C" { }`
  bool is_template = false;  // needs template arguments: get it as "name<float>"
};
// Every __global__ definition, in order (an overloaded name appears once per overload).
std::vector<KernelDefinition> find_kernels(std::string_view source);

}  // namespace luda::jit
