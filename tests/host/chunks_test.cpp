// A C++ host that loads Lua chunks from memory (or files) under chunk names of its own
// keeps their text through luda's API (stdlib/chunk_texts.h), so that kernels defined
// there compile from exactly that text; what a chunk name that several texts share, or a
// chunk whose text was never kept, says.
#include <gtest/gtest.h>
#include <lua.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

#include "luda/lua.h"
#include "tests/host/lua_host.h"

namespace {

struct Host : luda::test::LuaHost {
  // Loads `text` under `chunkname` with luda::load_chunk and runs it.
  std::string load(std::string_view text, const char* chunkname) { return call(luda::load_chunk(L, text, chunkname)); }
  lua_Integer integer(const std::string& expression) {
    EXPECT_EQ("", run("result = " + expression));
    lua_getglobal(L, "result");
    lua_Integer v = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return v;
  }
};

// Launches the cuda.jit kernel `k` (one int64 array argument) on one thread on the cpu and
// returns x[0].
std::string launch(const std::string& kernel) {
  return "(function() local x = luda.zeros(1, 'int64', {device = 'cpu'}) " + kernel + "[{1, 1}](x) return x[0] end)()";
}

TEST(HostChunks, KernelsCompileFromTheTextAHostLoadedUnderItsOwnName) {
  Host host;
  ASSERT_EQ("", host.load("local luda = require 'luda'\n"
                          "fill = luda.cuda.jit(function(x, v)\n"
                          "  local i = luda.cuda.grid(1)\n"
                          "  if i < #x then x[i] = v * i end\n"
                          "end)\n"
                          "triple = luda.vectorize(function(a) return 3 * a end)\n"
                          "broken = luda.cuda.jit(function(x)\n"
                          "  x[0] = true + 1\n"
                          "end)\n",
                          "=game/kernels"));
  ASSERT_EQ("", host.run("x = luda.zeros(16, 'int64', {device = 'cpu'})\n"
                         "fill[{1, 16}](x, 5)\n"
                         "out = triple(x):totable()"));
  lua_getglobal(host.L, "out");
  for (lua_Integer i = 0; i < 16; ++i) {
    lua_rawgeti(host.L, -1, i + 1);
    EXPECT_EQ(15 * i, lua_tointeger(host.L, -1)) << "element " << i;
    lua_pop(host.L, 1);
  }
  lua_pop(host.L, 1);
  // Errors point into the text the host gave, under its name.
  EXPECT_EQ("[string \"broken[{1, 1}](x)\"]:1: game/kernels:8:15: type error: cannot apply '+' to bool and int64\n"
            "    x[0] = true + 1\n"
            "           ~~~~~^~~",
            host.run("broken[{1, 1}](x)"));
}

TEST(HostChunks, AChunkLoadedWithoutItsTextSaysHowToKeepIt) {
  Host host;
  const std::string text = "f = function(x) x[0] = 1 end\n";
  ASSERT_EQ("", host.call(luaL_loadbuffer(host.L, text.data(), text.size(), "=game/raw")));
  EXPECT_EQ("[string \"k = luda.cuda.jit(f)\"]:1: cannot find the source of the function defined at game/raw:1: "
            "its chunk '=game/raw' was loaded without keeping its text: load it with luda::load_chunk (from "
            "Lua: luda.load), or register the text with luda::register_chunk, or pass the source text instead: "
            "luda.cuda.jit([[ function(x, out) ... end ]])",
            host.run("k = luda.cuda.jit(f)"));
  // Registered afterwards, the text is found.
  ASSERT_EQ(LUA_OK, luda::register_chunk(host.L, "=game/raw", text));
  EXPECT_EQ(1, host.integer(launch("luda.cuda.jit(f)")));
}

TEST(HostChunks, OneNameWithSeveralTextsIsFoundByLinesAndParametersOrIsAnError) {
  Host host;
  // Two texts under one name, each with a one-parameter function on line 1: ambiguous.
  ASSERT_EQ("", host.load("a = function(x) x[0] = 1 end\n", "=config"));
  ASSERT_EQ("", host.load("b = function(x) x[0] = 2 end\n", "=config"));
  EXPECT_EQ("[string \"k = luda.cuda.jit(a)\"]:1: config:1:5: source error: the chunk name '=config' was "
            "loaded with 2 different texts that each define a function with 1 parameter on line 1, and luda "
            "cannot tell which one is meant: give each chunk its own name, or pass the kernel's source as a "
            "string, e.g. cuda.jit([[function(x, out) ... end]])\n"
            "    a = function(x) x[0] = 1 end\n"
            "        ^",
            host.run("k = luda.cuda.jit(a)"));
  // The same text loaded again is one text.
  for (int i = 0; i < 3; ++i) ASSERT_EQ("", host.load("c = function(x) x[0] = 3 end\n", "=reloaded"));
  EXPECT_EQ(3, host.integer(launch("luda.cuda.jit(c)")));
  // Another line span, or another parameter count, tells texts of one name apart.
  ASSERT_EQ("", host.load("d = function(x) x[0] = 4 end\n", "=spans"));
  ASSERT_EQ("", host.load("\ne = function(x) x[0] = 5 end\n", "=spans"));
  ASSERT_EQ("", host.load("g = function(x, unused) x[0] = 6 end\n", "=spans"));
  EXPECT_EQ(4, host.integer(launch("luda.cuda.jit(d)")));
  EXPECT_EQ(5, host.integer(launch("luda.cuda.jit(e)")));
  ASSERT_EQ("", host.run("calls_g = luda.cuda.jit(function(x) g(x, 0) end)"));  // g: a device function
  EXPECT_EQ(6, host.integer(launch("calls_g")));
  // Texts that differ elsewhere but hold the same function at that place are not ambiguous.
  ASSERT_EQ("", host.load("h = function(x) x[0] = 7 end -- one\n", "=same"));
  ASSERT_EQ("", host.load("h2 = function(x) x[0] = 7 end -- two\n", "=same"));
  EXPECT_EQ(7, host.integer(launch("luda.cuda.jit(h)")));
  EXPECT_EQ(7, host.integer(launch("luda.cuda.jit(h2)")));
}

TEST(HostChunks, AFileLoadedByTheHostKeepsTheTextItWasLoadedWith) {
  Host host;
  std::string path = std::string(LUDA_BINARY_DIR) + "/host_chunks_test_file.lua";
  auto write = [&](const char* text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  };
  write("fill = function(x)\n  x[0] = 11\nend\n");
  ASSERT_EQ("", host.call(luda::load_file(host.L, path.c_str())));
  write("fill = function(x)\n  x[0] = 12\nend\n");  // changed on disk after loading
  EXPECT_EQ(11, host.integer(launch("luda.cuda.jit(fill)")));
  // Its errors are lua's: luaL_loadfilex's.
  EXPECT_EQ("cannot open " + path + ".absent: No such file or directory",
            host.call(luda::load_file(host.L, (path + ".absent").c_str())));
  std::remove(path.c_str());
}

TEST(HostChunks, LudaLoadKeepsTheTextFromLua) {
  Host host;
  // luda.load is load that keeps the text (for Lua code run by a stock interpreter).
  ASSERT_EQ("", host.run("f = luda.load('return function(x) x[0] = 21 end', '=from_lua')()"));
  EXPECT_EQ(21, host.integer(launch("luda.cuda.jit(f)")));
  EXPECT_EQ("nil\tfrom_lua:1: unexpected symbol near '='", [&] {
    EXPECT_EQ("", host.run("r = table.concat({tostring(select(1, luda.load('= 1', '=from_lua'))), "
                           "select(2, luda.load('= 1', '=from_lua'))}, '\\t')"));
    lua_getglobal(host.L, "r");
    std::string r = lua_tostring(host.L, -1);
    lua_pop(host.L, 1);
    return r;
  }());
}

}  // namespace
