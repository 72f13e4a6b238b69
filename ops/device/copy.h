// The copy of one array into another on a CUDA device by a kernel: any dtypes (converted
// as the host converts, runtime/ndarray.cpp: nonzero is true, float to integer truncates
// and saturates, NaN gives the minimum), any strides, negative ones included, and
// broadcasting. It is how an assignment copies within a GPU (runtime/ndarray.h,
// DeviceAssign); in a graph being recorded its launch is a kernel node that reads `src`
// and writes `dst`.
#pragma once

#include <string>

#include "runtime/ndarray.h"

namespace luda::ops::device {

// `dst` and `src` on one CUDA device, of shapes that broadcast, not sharing memory, on
// `stream` (null: the device's default stream). The kernel of each dtype pair is compiled
// at its first use (NVRTC, through the disk cache).
// Error for a layout of more than 8 axes that no merging reduces ("... has 9 axes that
// step unevenly; ...").
void device_assign(const NDArray& dst, const NDArray& src, CUstream stream = nullptr);

// Makes device_assign the copy NDArray::assign uses within a GPU, which a graph being
// recorded there records as a kernel node (set_device_assign). Each host's way into luda
// calls it before it can hold an array: the Lua module as it opens (luda.so, luda::Engine,
// the luda command), the C++ API as it makes a luda::Array. A call, not a static
// initializer, so that it cannot be left out of a static link or run too late. Safe from
// any thread; after the first call, one check of a flag.
void install_device_assign();

// The copy kernel's CUDA C++ for one pair of dtypes (its entry: copy_<from>_to_<to>).
std::string device_copy_source(DType to, DType from);

}  // namespace luda::ops::device
