// What the public API's implementation files share (api/*.cpp): conversions between the
// public types (luda/luda.h) and the library's own. Not installed.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "jit/call/call_args.h"
#include "luda/luda.h"
#include "runtime/ndarray.h"

namespace luda::api {

// An array over memory the host lent (Array::wrap's work): `data` is element [0, ..., 0],
// `strides` in elements (empty: C order). Errors start with `who`.
NDArray wrap_memory(void* data, Shape shape, DType dtype, Device device, Strides strides, std::shared_ptr<void> owner,
                    bool pinned, std::string_view who);

// A public argument as the library's kernels take it. An array argument points at the
// Arg's own array, which must outlive the call.
jit::KernelArg kernel_arg(const Arg& a);
std::vector<jit::KernelArg> kernel_args(const std::vector<Arg>& args);

}  // namespace luda::api
