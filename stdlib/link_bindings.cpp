// Device functions written in CUDA C++, as Numba's cuda.declare_device and link=:
//   local mul = luda.cuda.declare_device("mul", "float32(float32, float32)" [, {link = "mul.cu"}])
//   local k = luda.cuda.jit(function(x, y, out) ... out[i] = mul(x[i], y[i]) end, {link = {"mul.cu"}})
// A declared function is a value that kernels call (dsl/compile.h DeclaredFunction); its
// source is linked in: a file path, or CUDA C++ text given as a string.
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "runtime/format.h"
#include "stdlib/bindings.h"
#include "stdlib/link_bindings.h"

namespace luda::lua {
namespace {

using DeclaredRef = std::shared_ptr<const dsl::DeclaredFunction>;

// Whether a link entry is CUDA C++ text rather than a file's path.
bool is_source_text(std::string_view s) {
  return s.find('\n') != std::string_view::npos || s.find('{') != std::string_view::npos;
}

std::shared_ptr<const dsl::Chunk> read_linked(std::string_view entry, const std::string& text_name,
                                              std::string_view fname) {
  auto chunk = std::make_shared<dsl::Chunk>();
  chunk->is_cuda = true;
  if (is_source_text(entry)) {
    chunk->name = text_name;
    chunk->text = std::string(entry);
    return chunk;
  }
  std::string path(entry);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("{}: cannot read the linked file '{}' ({}); link takes CUDA C++ files (.cu) or source text", fname, path,
         std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  chunk->name = path;
  chunk->text = std::move(bytes).str();
  return chunk;
}

// The declared function at idx, or null.
const DeclaredRef* test_declared(lua_State* L, int idx) { return test_object<DeclaredRef>(L, idx, kDeclaredType); }

// luda.cuda.declare_device(name, signature [, {link =}])
int l_declare_device(lua_State* L) {
  constexpr std::string_view fname = "declare_device";
  std::string name(check_string(L, 1, fname));
  std::string_view text = check_string(L, 2, fname);
  check_options(L, 3, fname, {"link"});
  bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!identifier)
    fail("{}: '{}' is not a C function name (letters, digits and _, not starting with a digit): declare the name the "
         "CUDA source defines",
         fname, printable(name));
  dsl::Signature sig = dsl::parse_signature(text);
  auto d = std::make_shared<dsl::DeclaredFunction>();
  d->name = name;
  d->result = sig.result;
  d->params = sig.params;
  d->link = read_link(L, 3, fname, name);
  push_object<DeclaredRef>(L, kDeclaredType, std::move(d));
  return 1;
}

// Called outside a kernel: it runs only on a device.
int l_declared_call(lua_State* L) {
  const DeclaredRef& d = check_object<DeclaredRef>(L, 1, kDeclaredType, "declare_device");
  fail("'{}' is a CUDA C++ device function (declare_device); call it inside a cuda.jit kernel", d->name);
}

int l_declared_tostring(lua_State* L) {
  const DeclaredRef& d = check_object<DeclaredRef>(L, 1, kDeclaredType, "tostring");
  std::string s = fmt::format("<device function '{}' {}>", d->name, d->signature());
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int l_declared_index(lua_State* L) {
  const DeclaredRef& d = check_object<DeclaredRef>(L, 1, kDeclaredType, "index");
  if (lua_type(L, 2) == LUA_TSTRING) {
    std::string_view key = string_at(L, 2);
    if (key == "name") return lua_pushlstring(L, d->name.data(), d->name.size()), 1;
    if (key == "signature") {
      std::string s = d->signature();
      return lua_pushlstring(L, s.data(), s.size()), 1;
    }
  }
  fail("a declared device function has no field {} (fields: name, signature)", describe(L, 2));
}

}  // namespace

std::vector<std::shared_ptr<const dsl::Chunk>> read_link(lua_State* L, int opts, std::string_view fname,
                                                         const std::string& name) {
  std::vector<std::shared_ptr<const dsl::Chunk>> out;
  int type = push_option(L, opts, "link");
  if (type == LUA_TSTRING) {
    out.push_back(read_linked(string_at(L, -1), name + ".cu", fname));
  } else if (type == LUA_TTABLE) {
    auto n = static_cast<int>(lua_rawlen(L, -1));
    for (int i = 1; i <= n; ++i) {
      if (lua_rawgeti(L, -1, i) != LUA_TSTRING)
        fail("{}: link[{}] must be a file path or CUDA C++ source text, got {}", fname, i, describe(L, -1));
      out.push_back(read_linked(string_at(L, -1), n == 1 ? name + ".cu" : fmt::format("{}_{}.cu", name, i), fname));
      lua_pop(L, 1);
    }
  } else if (type != LUA_TNIL) {
    fail("{}: option 'link' must be a file path, CUDA C++ source text or a table of them, got {}", fname,
         describe(L, -1));
  }
  lua_pop(L, 1);
  return out;
}

std::shared_ptr<const dsl::DeclaredFunction> declared_at(lua_State* L, int idx) {
  const DeclaredRef* d = test_declared(L, idx);
  return d ? *d : nullptr;
}

void open_link(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__call", trampoline<l_declared_call>},
      {"__tostring", trampoline<l_declared_tostring>},
      {"__gc", gc_object<DeclaredRef, kDeclaredType>},
      {nullptr, nullptr},
  };
  static const luaL_Reg methods[] = {{nullptr, nullptr}};
  new_metatable_with_index(L, kDeclaredType, meta, methods, trampoline<l_declared_index>);
  static const luaL_Reg cuda_funcs[] = {
      {"declare_device", trampoline<l_declare_device>},
      {nullptr, nullptr},
  };
  lua_getfield(L, -1, "cuda");
  luaL_setfuncs(L, cuda_funcs, 0);
  lua_pop(L, 1);
}

}  // namespace luda::lua
