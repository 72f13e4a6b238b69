// Arguments of generated (cuda.jit) kernels, packed by the ABI of dsl/compile.h:
//   an array of element type T and ndim N -> struct { T* data; long long shape[N];
//                                                    long long strides[N]; }  (strides in elements)
//   a scalar -> its C type;  with boundscheck, a trailing BoundsRecord*.
// Pure (no GPU): tests check every byte here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/compile.h"
#include "dsl/types.h"
#include "jit/call/arg_buffer.h"
#include "jit/call/call_args.h"
#include "runtime/dtype.h"
#include "runtime/ndarray.h"

namespace luda::jit {

// One dsl scalar kind as a runtime dtype (ORDER SCALAR = ORDER DTYPE).
static_assert(dsl::kNumScalars == kNumDTypes, "dsl::Scalar and DType list the same types (ORDER SCALAR)");
inline DType dtype_of(dsl::Scalar s) { return static_cast<DType>(s); }
inline dsl::Scalar scalar_of(DType t) { return static_cast<dsl::Scalar>(t); }

// Bytes of the by-value struct of an ndim-N array: 8 + 16 N.
inline std::size_t array_struct_size(int ndim) { return 8 + 16 * static_cast<std::size_t>(ndim); }

// Appends the array struct of `a` (a device array: its data() is a device address).
// `ndim` must equal a.ndim(); a 0-d array passes only its data pointer.
void put_array(ArgBuffer& out, const NDArray& a);

// Converts `arg` to `want` as raw kernels do: an integer must fit ("... but 300 does not
// fit in int8"), a float passed for an integer must have an integral value, a typed
// scalar must have exactly that dtype, a boolean only fits bool. Errors name the kernel
// and the argument: "kernel 'k': argument 2 'n' is int32 but 3000000000 does not fit in
// int32". `param` is the parameter's name ("" when unknown).
Scalar convert_scalar(std::string_view kernel, std::size_t index, std::string_view param, DType want,
                      const KernelArg& arg);

// The first of `uses` (dsl::WeakIntUse: a Lua integer argument that the code converts to a
// narrower integer type) whose argument is out of that type's bounds; nullptr when none
// is. Inline: a launch of code with such uses asks it every time.
inline const dsl::WeakIntUse* weak_int_out_of_bounds(std::span<const KernelArg> args,
                                                     std::span<const dsl::WeakIntUse> uses) {
  for (const dsl::WeakIntUse& u : uses) {
    const KernelArg& a = args[static_cast<std::size_t>(u.param)];
    if (a.kind == KernelArg::Kind::Int && !integer_fits(a.i, dtype_of(u.to))) [[unlikely]]
      return &u;
  }
  return nullptr;
}
// NumPy 2's OverflowError for it, after `who` ("vectorize 'add'"), naming the argument
// ("argument 2 'b'"): "vectorize 'add': Lua integer 300 out of bounds for uint8, which
// argument 2 'b' meets at add.lua:3; pass a typed scalar (luda.int64(300)), which
// promotes as an array does, or convert the arrays first (x:astype("int64"))". A use with
// no `where` (the array operations' own code) leaves out the place.
[[noreturn]] void weak_int_error(std::string_view who, std::string_view argument, const dsl::WeakIntUse& use,
                                 std::int64_t value);

}  // namespace luda::jit
