-- `luarocks --lua-version=5.4 make` builds luda's Lua module (luda.so) with CMake and
-- installs it into the rocks tree, where lua5.4 finds it after `eval "$(luarocks
-- --lua-version=5.4 path)"`. Needs what scripts/setup installs (a C++20 compiler, Lua 5.4's
-- headers, fmt, Boost.Context) and the CUDA toolkit's headers (/usr/local/cuda); a GPU is
-- used when present, else the cpu device. CMake's build type comes from $CMAKE_BUILD_TYPE,
-- Release when unset.
rockspec_format = "3.0"
package = "luda"
version = "0.1.0-1"
source = {
   url = "git+file://.",
}
description = {
   summary = "GPU kernels written as Lua 5.4 functions (CUDA, or the cpu device)",
   detailed = [[
luda reads a Lua function, infers its types, emits CUDA C++, compiles it with NVRTC and
runs it on device arrays: Numba-CUDA's vectorize and cuda.jit, CuPy's ElementwiseKernel,
ReductionKernel, RawKernel and fuse, with NumPy-like arrays. Without a GPU the same kernels
run on the cpu device, compiled by the host's C++ compiler.
]],
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
build = {
   type = "cmake",
   -- Only the module: no command, no tests, no install step (luarocks copies luda.so).
   variables = {
      LUA_INCLUDE_DIR = "$(LUA_INCDIR)",
      LUDA_BUILD_CLI = "OFF",
      LUDA_BUILD_TESTS = "OFF",
      LUDA_INSTALL = "OFF",
   },
   install_pass = false,
   install = {
      lib = { luda = "build.luarocks/luda.so" },
   },
   copy_directories = { "docs" },
}
