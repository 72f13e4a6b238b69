// luda for C++ hosts: one include brings the runtime (devices, streams, memory, ndarray,
// launches), raw CUDA kernels, the kernel kinds (jit/kinds.h) and array arithmetic
// (ops/array_math.h), and the Lua module. Open the module in a lua_State with
//   luaL_requiref(L, "luda", luaopen_luda, 0);
// and load chunks with luda::load_chunk / luda::load_file (stdlib/chunk_texts.h), so that
// kernels defined in them compile from the text they were loaded from.
// luda::request_interrupt() (runtime/interrupt.h), async-signal-safe, stops a running cpu
// kernel or a wait for a GPU from a host's own signal handler or thread.
#pragma once

#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/dtype.h"
#include "runtime/driver.h"
#include "runtime/device.h"
#include "runtime/stream.h"
#include "runtime/memory.h"
#include "runtime/launch.h"
#include "runtime/ndarray.h"
#include "jit/nvrtc.h"
#include "jit/kernel_params.h"
#include "jit/raw_module.h"
#include "jit/kinds.h"
#include "ops/array_math.h"
#include "stdlib/chunk_texts.h"
#include "stdlib/module.h"
