// luda's Lua-written modules (stdlib/lua/) in a C++ host's state: require finds them in a
// luda::Engine; an error of a module's own names its file and line, one the module raises
// for the script's mistake names the script's line; a state without Lua's package library
// is told what luda needs; luda opened again in one state gets modules of its own.
#include <gtest/gtest.h>
#include <lua.hpp>

#include <fstream>
#include <string>

#include "luda/lua.h"
#include "luda/luda.h"

namespace {

// The number of the first line of stdlib/lua/<file> that holds `text`, 0 when none does.
int line_of(const std::string& file, const std::string& text) {
  std::ifstream in(std::string(LUDA_SOURCE_DIR) + "/stdlib/lua/" + file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return n;
  return 0;
}

template <class F>
luda::ScriptError script_error(F&& f) {
  try {
    f();
  } catch (const luda::ScriptError& e) {
    return e;
  }
  ADD_FAILURE() << "no ScriptError";
  return luda::ScriptError("", "", 0, "", "");
}

TEST(LuaModules, AnEngineRequiresThem) {
  luda::Engine lua;
  EXPECT_TRUE(lua.run("return require('luda.chunked') == luda.chunked")[0].as_bool());
  EXPECT_EQ(lua.run("return require('luda.chunked')(luda.arange(10), 4).numblocks[1]")[0].as_integer(), 3);
}

TEST(LuaModules, AnErrorOfAModuleNamesItsFileAndLine) {
  luda::Engine lua;
  int line = line_of("luda/chunked/array.lua", "methods.blocks = function(c)");
  ASSERT_GT(line, 0);
  auto e = script_error(
      [&] { lua.run("local c = luda.chunked(luda.arange(4), 2)\nlocal blocks = c.blocks()", "=script"); });
  EXPECT_EQ(e.file(), "luda/chunked/array.lua");
  EXPECT_EQ(e.line(), line);
  EXPECT_EQ(e.message(), "attempt to index a nil value (local 'c')");
  EXPECT_NE(e.traceback().find("\n\tscript:2:"), std::string::npos) << e.traceback();
}

TEST(LuaModules, AnErrorAModuleRaisesForTheScriptNamesTheScriptsLine) {
  luda::Engine lua;
  auto e = script_error([&] { lua.run("local x = luda.arange(3)\n\nlocal c = luda.chunked(x, {{1, 1}})", "=script"); });
  EXPECT_EQ(e.file(), "script");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(
      e.message(),
      "luda.chunked: the chunks of axis 1 add up to 2, but the axis has 3 elements; give extents that add up to it");
}

// luaL_requiref(L, "luda", luaopen_luda, 1), as a host opens luda, under lua_pcall.
int require_luda(lua_State* L) {
  luaL_requiref(L, "luda", luaopen_luda, 1);
  return 1;
}

TEST(LuaModules, AStateWithoutRequireIsToldWhatLudaNeeds) {
  lua_State* L = luaL_newstate();
  lua_pushcfunction(L, require_luda);
  ASSERT_NE(lua_pcall(L, 0, 1, 0), LUA_OK);
  EXPECT_STREQ(lua_tostring(L, -1),
               "luda's Lua-written modules need Lua's package library (require): open it before luda, e.g. with "
               "luaL_openlibs(L)");
  lua_pop(L, 1);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  EXPECT_EQ(lua_getfield(L, -1, "luda"), LUA_TNIL);  // no half-open module left behind
  lua_close(L);
}

TEST(LuaModules, LudaOpenedAgainGetsModulesOfItsOwn) {
  luda::Engine lua;
  lua_State* L = lua.state();
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_luda);
  lua_setfield(L, -2, "luda");
  lua_pop(L, 1);
  lua.run("first = luda\npackage.loaded.luda = nil\nluda = require 'luda'");
  EXPECT_TRUE(lua.run("return luda ~= first and luda.chunked ~= first.chunked")[0].as_bool());
  EXPECT_TRUE(lua.run("return require('luda.chunked') == luda.chunked and require('luda') == luda")[0].as_bool());
  EXPECT_EQ(lua.run("return luda.chunked(luda.arange(5), 2):compute():sum():item()")[0].as_integer(), 10);
}

}  // namespace
