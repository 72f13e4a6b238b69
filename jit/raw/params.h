// What the text of a CUDA C++ source shows of its kernels: the `__global__` definitions
// (names, linkage, templates) and their parameters' names. The parameter types are the
// compiler's to tell (jit/raw/reflection.h): macros, #if, -D options and typedefs decide
// them, and only the compiler reads those.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dtype.h"

namespace luda::jit {

// One parameter's type, as the compiler reads it (kernel_reflection.h).
struct ParamType {
  enum class Kind { Pointer, Scalar, Opaque };  // Opaque: by value, with no luda dtype
  Kind kind = Kind::Opaque;
  std::optional<DType> dtype;  // the pointee for Pointer (nullopt for void*, struct*, T**), the type for Scalar
  bool is_const = false;       // pointee constness
  std::string spelling;        // "const float*", "unsigned int", as the compiler spells it
};

struct KernelParam {
  std::string name;  // from the source text; "" for an unnamed parameter or where unknown
  ParamType type;
};

struct KernelSignature {
  std::string name;
  std::vector<KernelParam> params;
};

// The names of `name`'s parameters as its definition spells them ("" for an unnamed one);
// nullopt when the source shows no definition, or more than one (overloads, or both arms
// of an #if). They label the compiler's list in messages when they are as many.
std::optional<std::vector<std::string>> find_parameter_names(std::string_view source, std::string_view name);

// Whether a #define of the source holds __global__: kernels the text does not show.
bool macros_define_kernels(std::string_view source);

// Names of all __global__ functions defined in the source, in order, each once.
std::vector<std::string> list_kernels(std::string_view source);

// A __global__ function definition as the source shows it.
struct KernelDefinition {
  std::string name;
  bool extern_c = false;     // `extern "C" __global__` or inside `extern "C" { }`
  bool is_template = false;  // needs template arguments: get it as "name<float>"
  bool conditional = false;  // inside an #if: the compiler may not see it
};
// Every __global__ definition, in order (an overloaded name appears once per overload).
std::vector<KernelDefinition> find_kernels(std::string_view source);

}  // namespace luda::jit
