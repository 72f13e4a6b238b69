// The Lua module `luda`. A host application opens it in its own lua_State with
// luaL_requiref(L, "luda", luaopen_luda, 0); stock lua5.4 loads it from luda.so.
#pragma once

struct lua_State;

extern "C" int luaopen_luda(lua_State* L);
