// luda.display: pictures of arrays (docs/notebooks.md).
//   luda.display.image(x [, {cmap =, vmin =, vmax =, file =}])
//   luda.display.plot([x,] y [, {kind =, title =, xlabel =, ylabel =, width =, height =, file =}])
//   luda.display.graph(g [, {file =}])
// In a notebook, the picture goes to the cell's output: the kernel sets a display sink
// (the registry's kDisplaySinkKey, a function(bundle) of MIME type -> bytes). Elsewhere,
// and whenever `file` is given, it is written to a file, and a line on stdout says where.
#include <lua.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "ops/image.h"
#include "ops/plot.h"
#include "stdlib/bindings.h"
#include "stdlib/lua_support.h"

namespace luda::lua {
namespace {

// The pictures written without file=: image1.png, image2.png, ... in the current folder.
int g_images = 0;

// Shows a picture: to the sink when there is one and no file is asked for; else to `file`
// (or the next default name). Returns the number of values it pushed (the path, or none).
int show(lua_State* L, const std::string& bytes, const char* mime, const std::string& text, int options,
         const char* who, const char* stem, const char* extension) {
  std::string file;
  if (push_option(L, options, "file") != LUA_TNIL) {
    if (!lua_isstring(L, -1)) fail("{}: option 'file' must be a path, got {}", who, describe(L, -1));
    file = lua_tostring(L, -1);
  }
  lua_pop(L, 1);
  if (file.empty() && lua_getfield(L, LUA_REGISTRYINDEX, kDisplaySinkKey) == LUA_TFUNCTION) {
    lua_createtable(L, 0, 2);
    lua_pushlstring(L, bytes.data(), bytes.size());
    lua_setfield(L, -2, mime);
    lua_pushlstring(L, text.data(), text.size());
    lua_setfield(L, -2, "text/plain");
    lua_call(L, 1, 0);
    return 0;
  }
  if (file.empty()) {
    lua_pop(L, 1);
    file = std::string(stem) + std::to_string(++g_images) + extension;
  }
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail("{}: cannot write {}", who, file);
  std::printf("%s: wrote %s (%s)\n", who, file.c_str(), text.c_str());
  std::fflush(stdout);
  lua_pushlstring(L, file.data(), file.size());
  return 1;
}

// luda.display.image(x [, {cmap=, vmin=, vmax=, file=}])
int l_image(lua_State* L) {
  NDArray& x = check_array(L, 1, "image");
  check_options(L, 2, "image", {"cmap", "vmin", "vmax", "file"});
  ops::ImageOptions o;
  if (push_option(L, 2, "cmap") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING) fail("image: option 'cmap' must be a colormap's name, got {}", describe(L, -1));
    o.cmap = lua_tostring(L, -1);
  }
  lua_pop(L, 1);
  for (const char* key : {"vmin", "vmax"}) {
    if (push_option(L, 2, key) != LUA_TNIL) {
      if (lua_type(L, -1) != LUA_TNUMBER) fail("image: option '{}' must be a number, got {}", key, describe(L, -1));
      (key[1] == 'm' && key[2] == 'i' ? o.vmin : o.vmax) = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
  }
  std::string png = ops::png_of(x, o);
  std::string text = "<image " + std::to_string(x.shape()[1]) + " x " + std::to_string(x.shape()[0]) + ">";
  return show(L, png, "image/png", text, 2, "luda.display.image", "image", ".png");
}

// A string option of the options table at `options` into *out (unchanged when absent).
void string_option(lua_State* L, int options, const char* key, const char* who, std::string* out) {
  if (push_option(L, options, key) != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING) fail("{}: option '{}' must be a string, got {}", who, key, describe(L, -1));
    *out = lua_tostring(L, -1);
  }
  lua_pop(L, 1);
}

// luda.display.plot([x,] y [, {kind=, title=, xlabel=, ylabel=, width=, height=, file=}])
int l_plot(lua_State* L) {
  const bool two = test_array(L, 2) != nullptr;
  const int options = two ? 3 : 2;
  NDArray& y = check_array(L, two ? 2 : 1, "plot");
  const NDArray* x = two ? &check_array(L, 1, "plot") : nullptr;
  check_options(L, options, "plot", {"kind", "title", "xlabel", "ylabel", "width", "height", "file"});
  ops::PlotOptions o;
  string_option(L, options, "kind", "plot", &o.kind);
  string_option(L, options, "title", "plot", &o.title);
  string_option(L, options, "xlabel", "plot", &o.xlabel);
  string_option(L, options, "ylabel", "plot", &o.ylabel);
  for (auto [key, field] : {std::pair{"width", &o.width}, std::pair{"height", &o.height}}) {
    if (push_option(L, options, key) != LUA_TNIL) {
      lua_Integer v = lua_tointeger(L, -1);
      if (!lua_isinteger(L, -1) || v < 16 || v > 8192)
        fail("plot: option '{}' must be a number of pixels from 16 to 8192, got {}", key, describe(L, -1));
      *field = static_cast<int>(v);
    }
    lua_pop(L, 1);
  }
  std::string svg = ops::plot_svg(x, y, o);
  std::string text = "<plot of " + std::to_string(y.size()) + " points>";
  return show(L, svg, "image/svg+xml", text, options, "luda.display.plot", "plot", ".svg");
}

// luda.display.graph(g [, {file=}]): the DAG of g:dot() drawn by Graphviz.
int l_graph(lua_State* L) {
  check_options(L, 2, "graph", {"file"});
  if (lua_type(L, 1) != LUA_TUSERDATA || lua_getfield(L, 1, "dot") != LUA_TFUNCTION)
    fail("graph: give a recorded graph (luda.graph), got {}", describe(L, 1));
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);  // g:dot()
  if (lua_type(L, -1) != LUA_TSTRING) fail("graph: g:dot() gave {}, not text", describe(L, -1));
  std::string svg = ops::dot_svg(lua_tostring(L, -1));
  lua_pop(L, 1);
  return show(L, svg, "image/svg+xml", "<graph>", 2, "luda.display.graph", "graph", ".svg");
}

}  // namespace

void open_display(lua_State* L) {
  static const luaL_Reg funcs[] = {
      {"image", trampoline<l_image>},
      {"plot", trampoline<l_plot>},
      {"graph", trampoline<l_graph>},
      {nullptr, nullptr},
  };
  luaL_newlib(L, funcs);
  lua_setfield(L, -2, "display");
}

}  // namespace luda::lua
