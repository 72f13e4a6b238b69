// The Lua object of a kernel kind (luda.vectorize, elementwise, reduction, fuse): made and
// given its methods in kind_bindings.cpp, called in kind_calls.cpp. Internal to stdlib/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jit/kinds/elementwise.h"
#include "jit/kinds/frontend.h"
#include "jit/kinds/reduction.h"
#include "stdlib/environment.h"
#include "stdlib/kind_bindings.h"

namespace luda::lua {

// The type names, defined once (kind_bindings.cpp) so that a type tag compares by
// address: telling the four kinds apart on a call is one read of the userdata's tag.
extern const char kVectorizeType[];    // "vectorize"
extern const char kElementwiseType[];  // "elementwise_kernel"
extern const char kReductionType[];    // "reduction_kernel"
extern const char kFuseType[];         // "fused_function"

struct KindObject {
  const char* type = kVectorizeType;
  std::string name;
  std::vector<std::string> in_names;
  std::size_t nout = 1;
  std::unique_ptr<LuaEnvironment> env;  // before the kinds: destroyed after them
  std::shared_ptr<jit::VectorizeState> vectorize;
  std::shared_ptr<jit::StringKindState> strings;
  std::shared_ptr<jit::FuseState> fuse;
  std::unique_ptr<jit::ElementwiseKind> elementwise;
  std::unique_ptr<jit::ReductionKind> reduction;
  // fuse whose work after the reductions may need every element again: the two passes
  // (the reductions' values, then the function elementwise; jit/kinds/frontend.h).
  std::unique_ptr<jit::ReductionKind> fuse_first;
  std::unique_ptr<jit::ElementwiseKind> fuse_second;
  std::string who;  // "vectorize 'add'": starts messages (made once: calls format nothing)
};

// Whether a userdata tag (userdata_tag) is one of the four kinds' (a Box<KindObject>).
inline bool is_kind_tag(const void* t) {
  return t == kVectorizeType || t == kElementwiseType || t == kReductionType || t == kFuseType;
}

// The kind object at idx, else nullptr.
KindObject* test_kind(lua_State* L, int idx);

// Sets __call, k(...), in the metatables of the four kinds (made already) (kind_calls.cpp).
void set_call_metamethods(lua_State* L);

}  // namespace luda::lua
