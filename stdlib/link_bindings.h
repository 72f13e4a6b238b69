// CUDA C++ device functions declared for kernels (luda.cuda.declare_device) and the
// sources linked with them (the link option of declare_device and cuda.jit).
#pragma once

#include <lua.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/compile.h"

namespace luda::lua {

// The `link` option of the options table at opts: a file path, CUDA C++ source text (a
// string holding a newline or a '{'), or a table of them, each read now (files relative to
// the working directory). Source text is named "<name>.cu" (`<name>_<i>.cu` for several)
// in compiler messages. Errors name `fname` and the file.
std::vector<std::shared_ptr<const dsl::Chunk>> read_link(lua_State* L, int opts, std::string_view fname,
                                                         const std::string& name);

// The declared function at idx, or null when the value is none.
std::shared_ptr<const dsl::DeclaredFunction> declared_at(lua_State* L, int idx);

// luda.cuda.declare_device, and the declared functions' metatable.
void open_link(lua_State* L);

}  // namespace luda::lua
