-- luda.graph: a function's luda work recorded once and replayed. Random programs of
-- operations over overlapping views are checked against the same program run eagerly
-- (luda's eager results are checked against NumPy and plain Lua elsewhere); the edges
-- against the hazards each program has; two independent kernels are seen to run at the
-- same time; replays take new arguments; other shapes record variants; every operation
-- that needs a host result is refused at its line, and the process goes on.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local error_of, here = support.error_of, support.here

local on_devices = support.device_tests(_ENV)
local cuda = luda.cuda

-- A host array of `shape` from its elements in C order.
local function flat(data, shape) return { shape = shape, data = data } end

-- Host copies of arrays, to compare exactly.
local function read_all(arrays)
  local out = {}
  for i, a in ipairs(arrays) do out[i] = H.read(a) end
  return out
end

local function fresh(shape, n)
  local arrays = {}
  for i = 1, n do arrays[i] = H.to_array(H.uniform(shape, -4, 4), "float64") end
  return arrays
end

local function copies(arrays)
  local out = {}
  for i, a in ipairs(arrays) do out[i] = a:copy() end
  return out
end

-- A random program over four 6x5 float64 arrays: each step reads and writes views (the
-- whole array, its top or bottom rows, a column slice with a step), so that steps over
-- the same bytes meet in every hazard and steps over disjoint rows of one array do not.
local VIEWS = {
  whole = function(a) return a end,
  top = function(a) return a:slice("0:3, :") end,
  bottom = function(a) return a:slice("3:6, :") end,
}
local VIEW_NAMES = { "whole", "top", "bottom" }

local function random_program(steps)
  local program = {}
  for s = 1, steps do
    local x, y, z = math.random(4), math.random(4), math.random(4)
    local view = VIEW_NAMES[math.random(3)]
    local v = VIEWS[view]
    local op = math.random(7)
    local c = math.random(-3, 3) + 0.5
    program[s] = function(arrays)
      local X, Y, Z = v(arrays[x]), v(arrays[y]), v(arrays[z])
      if op == 1 then luda.add(X, Y, { out = Z })
      elseif op == 2 then luda.multiply(X, c, { out = Z })
      elseif op == 3 then luda.copyto(Z, X)
      elseif op == 4 then Z:fill(c)
      elseif op == 5 then luda.sqrt(luda.abs(X), { out = Z })  -- a temporary between two kernels
      elseif op == 6 then luda.add(Z, X:sum(1), { out = Z })  -- a reduction, broadcast back
      else luda.subtract(X, Y * c, { out = Z })
      end
    end
  end
  return function(...)
    local arrays = { ... }
    for _, step in ipairs(program) do step(arrays) end
    return arrays[1] + arrays[2]  -- a new array, returned
  end
end

describe("luda.graph", function()
  before_each(function() math.randomseed(1313) end)

  on_devices("replays random programs over overlapping views as they run eagerly", function()
    for trial = 1, 12 do
      local run = random_program(math.random(1, 14))
      local examples = fresh({ 6, 5 }, 4)
      local g = luda.graph(run, table.unpack(examples))
      for replay = 1, 2 do
        local args = fresh({ 6, 5 }, 4)
        local eager_args = copies(args)
        local want = run(table.unpack(eager_args))
        local got = g(table.unpack(args))
        local what = ("trial %d, replay %d"):format(trial, replay)
        H.check(got, H.read(want), H.exact, what .. ", result")
        for i = 1, 4 do H.check(args[i], H.read(eager_args[i]), H.exact, what .. ", argument " .. i) end
      end
      -- The examples were only recorded on: nothing ran on them.
      assert.are.equal(1, g:stats().recordings)
      assert.are.equal(2, g:stats().replays)
    end
  end)

  on_devices("orders exactly the steps with a hazard between them", function()
    local a = luda.zeros({ 6, 5 }, "float64")
    local b = luda.zeros({ 6, 5 }, "float64")
    local g = luda.graph(function(x, y)
      x:slice("0:3, :"):fill(1)               -- 1: writes x's top
      x:slice("3:6, :"):fill(2)               -- 2: writes x's bottom (no hazard with 1)
      luda.add(x:slice("0:3, :"), 1, { out = y:slice("0:3, :") })  -- 3: reads 1's bytes
      luda.copyto(x:slice("3:6, :"), y:slice("3:6, :"))            -- 4: overwrites 2's bytes (write after write)
      x:slice("0:3, :"):fill(5)               -- 5: writes what 3 read (write after read)
    end, a, b)
    local nodes = g:nodes()
    local after = {}
    for i, n in ipairs(nodes) do after[i] = table.concat(n.after, ",") end
    assert.are.same({ "", "", "1", "2", "3" }, after)
    local dot = g:dot()
    assert.truthy(dot:find("n0 -> n2 [label=\"argument 1 (read after write)\"]", 1, true), dot)
    assert.truthy(dot:find("n1 -> n3 [label=\"argument 1 (write after write)\"]", 1, true), dot)
    assert.truthy(dot:find("n2 -> n4 [label=\"argument 1 (write after read)\"]", 1, true), dot)
    assert.truthy(nodes[1].where:match("graph_spec%.lua:%d+$"), nodes[1].where)
    g(a, b)
    H.check(a, flat({ 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, { 6, 5 }), H.exact)
    H.check(b:slice("0:3, :"), flat({ 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 }, { 3, 5 }), H.exact)
  end)

  on_devices("runs independent kernels at the same time", function(device)
    -- Two kernels that meet through a flag of their module, which the graph does not see:
    -- each raises its own and waits for the other's. Run one after the other, the first
    -- gives up waiting and reports 0.
    local m = luda.raw_module([[
__device__ volatile int flags[2];
extern "C" __global__ void meet(int* seen, int me, long long limit) {
  flags[me] = 1;
  long long n = 0;
  while (flags[1 - me] == 0 && n < limit) ++n;
  seen[0] = flags[1 - me];
}
extern "C" __global__ void reset() { flags[0] = 0; flags[1] = 0; }
]])
    local meet, reset = m:get_function("meet"), m:get_function("reset")
    local sa, sb = luda.zeros(1, "int32"), luda.zeros(1, "int32")
    -- Long enough for the other to start: a few seconds at worst, run one after the other.
    local limit = luda.int64(device == "cpu" and 300000000 or 3000000)
    local g = luda.graph(function(x, y)
      meet(1, 1, { x, luda.int32(0), limit })
      meet(1, 1, { y, luda.int32(1), limit })
    end, sa, sb)
    assert.are.equal(0, g:stats().edges)
    for _ = 1, 3 do
      reset(1, 1, {})
      g(sa, sb)
      assert.are.same({ 1, 1 }, { sa:item(), sb:item() })
      sa:fill(0)
      sb:fill(0)
    end
  end)

  on_devices("returns new arrays, the caller's out arrays, arguments and other values", function()
    local x0 = luda.array({ 1, 2, 3, 4 }, "float32")
    local kept = luda.array({ 7, 8 }, "int32")
    local g = luda.graph(function(x)
      local y = x * x
      return y, x, kept, 42, "text", y:slice("1:3")
    end, x0)
    local x = luda.array({ 5, 6, 7, 8 }, "float32")
    local y, same, k, n, s, view = g(x)
    H.check(y, H.of({ 25, 36, 49, 64 }, { 4 }), H.exact)
    assert.are.equal(tostring(x), tostring(same))
    same[0] = 9
    assert.are.equal(9, x[0])  -- the argument itself, not a copy
    assert.are.equal(kept, k)
    assert.are.same({ 42, "text" }, { n, s })
    H.check(view, H.of({ 36, 49 }, { 2 }), H.exact)
    view[0] = -1
    assert.are.equal(-1, y[1])  -- a view of the same new array
    local y2 = g(x)
    H.check(y2, H.of({ 81, 36, 49, 64 }, { 4 }), H.exact)
    H.check(y, H.of({ 25, -1, 49, 64 }, { 4 }), H.exact)  -- each call's result is its own
    local into = luda.empty(4, "float32")
    local r = g(x, { out = { into } })
    assert.are.equal(tostring(into), tostring(r))
    r[0] = 0
    assert.are.equal(0, into[0])
    assert.are.equal(here() .. "graph: out[1] is a float64 array of shape (4,) on " .. x.device .. "; the result it receives is a float32 array of shape (4,) on " .. x.device .. " (a whole new array: out must be C-contiguous and match it)", error_of(function() g(x, { out = { luda.empty(4, "float64") } }) end))
  end)

  on_devices("replays empty, 0-d, size-1 and strided arguments", function()
    for _, layout in ipairs(H.layouts("float64")) do
      local name, example = layout[1], layout[2]
      local g = luda.graph(function(x) return x * 2 + 1, x end, example)
      -- Another array of the same layout: the example's pattern made again.
      local other = H.layouts("float64")
      local x
      for _, l in ipairs(other) do if l[1] == name then x = l[2] end end
      local y, same = g(x)
      H.check(y, H.map(function(v) return v * 2 + 1 end, H.read(x)), H.exact, name)
      assert.are.same(x.shape, same.shape, name)
      assert.are.same(x.strides, same.strides, name)
    end
  end)

  on_devices("replays arguments that view one buffer, moved together", function()
    local function run(whole, part)
      luda.multiply(part, 10, { out = part })   -- rows 2 and 3 of whole
      local tail = whole:slice("4:6, :")         -- a view past part, made inside
      luda.add(tail, 1, { out = tail })
      return whole + 1                          -- reads all of whole, after the writes
    end
    local a = H.to_array(H.uniform({ 6, 4 }, -4, 4), "float64")
    local g = luda.graph(run, a, a:slice("2:4, :"))
    for _ = 1, 2 do
      local b = H.to_array(H.uniform({ 6, 4 }, -4, 4), "float64")
      local c = b:copy()
      local want = run(c, c:slice("2:4, :"))
      local got = g(b, b:slice("2:4, :"))
      H.check(got, H.read(want), H.exact)
      H.check(b, H.read(c), H.exact)
    end
    assert.are.equal(1, g:stats().recordings)
    -- Views at another distance are another variant.
    local b = luda.zeros({ 6, 4 }, "float64")
    g(b, b:slice("1:3, :"))
    assert.are.equal(2, g:stats().recordings)
  end)

  on_devices("keeps values the host writes while recording", function()
    local g = luda.graph(function(x)
      local r = luda.arange(4, "float32")      -- written by the host, now
      local t = luda.array({ 5, 6, 7, 8 }, "float32")
      return r, x + r + t
    end, luda.zeros(4, "float32"))
    local r, s = g(luda.ones(4, "float32"))
    H.check(r, flat({ 0, 1, 2, 3 }, { 4 }), H.exact)
    H.check(s, flat({ 6, 8, 10, 12 }, { 4 }), H.exact)
    r[0] = 9
    local r2, s2 = g(luda.ones(4, "float32"))
    H.check(r2, flat({ 0, 1, 2, 3 }, { 4 }), H.exact)  -- each call's copy starts from the recorded values
    H.check(s2, flat({ 6, 8, 10, 12 }, { 4 }), H.exact)
  end)

  on_devices("records a variant for other shapes and dtypes, up to eight", function()
    local g = luda.graph(function(x) return x + 1 end, luda.zeros(3, "float32"))
    H.check(g(luda.zeros(5, "int32")), H.of({ 1, 1, 1, 1, 1 }, { 5 }), H.exact)
    assert.are.equal("int32", g(luda.zeros(5, "int32")).dtype)
    local s = g:stats()
    assert.are.same({ 2, 2 }, { s.variants, s.recordings })
    for n = 6, 11 do g(luda.zeros(n, "float32")) end
    assert.are.equal(8, g:stats().variants)
    local where, err = here(), error_of(function() g(luda.zeros(12, "float32")) end)
    assert.are.equal(where .. "graph (", err:sub(1, #where + 7))
    local dev = luda.zeros(1).device
    assert.truthy(err:find("): these arguments (float32 (12,) on " .. dev .. ") match none of the 8 variants it has recorded ((float32 (3,) on " .. dev .. "), (int32 (5,) on " .. dev .. "), (float32 (6,)", 1, true), err)
    assert.truthy(err:find("and a graph records at most 8; make another luda.graph for these shapes", 1, true), err)
    -- A recorded shape still replays.
    H.check(g(luda.zeros(3, "float32")), H.of({ 1, 1, 1 }, { 3 }), H.exact)
  end)

  on_devices("refuses what needs a host result at the line, and records nothing", function()
    local x = luda.array({ 1, 2, 3 }, "float64")
    local tail = " needs a result on the host, but a graph is being recorded and its work has not run; return " ..
                 "the arrays from the recorded function and read them after the graph runs"
    local cases = {
      { "x:get()", function(a) return a:get() end },
      { "x:totable()", function(a) return a:totable() end },
      { "x:item()", function(a) return (a:sum()):item() end },
      { "tostring(x) (and print(x))", function(a) return tostring(a) end },
      { "luda.cuda.synchronize()", function() luda.cuda.synchronize() end },
      { "s:synchronize()", function() luda.stream():synchronize() end },
      { "reading an element of an array", function(a) return a[0] end },
    }
    for _, case in ipairs(cases) do
      local info = debug.getinfo(case[2], "S")
      local err = error_of(function() luda.graph(function(a) local y = a * 2; return case[2](y) end, x) end)
      assert.are.equal(info.short_src .. ":" .. info.linedefined .. ": " .. case[1] .. tail, err)
      -- Nothing is left recording: eager work runs.
      H.check(x * 3, H.of({ 3, 6, 9 }, { 3 }), H.exact)
    end
    -- The function's own errors pass as they are.
    local where, err = here(), error_of(function() luda.graph(function() error("mine") end) end)
    assert.are.equal(where .. "mine", err)
    H.check(x + 1, H.of({ 2, 3, 4 }, { 3 }), H.exact)
    local nested = "luda.graph: a graph is being recorded on this thread already; a recorded function cannot " ..
                   "record or replay another graph (call that graph's function directly)"
    assert.are.equal(here() .. nested, error_of(function() luda.graph(function() luda.graph(function() end) end) end))
    local inner = luda.graph(function(a) return a + 1 end, x)
    assert.are.equal(here() .. nested, error_of(function() luda.graph(function(a) return inner(a) end, x) end))
    H.check(inner(x), H.of({ 2, 3, 4 }), H.exact)
  end)

  on_devices("copies between dtypes, strides and shapes as eager copies do", function()
    -- Values at every edge of a conversion: NaN, infinities, past each integer range,
    -- fractions of both signs, negative zero.
    local specials = { 0 / 0, 1 / 0, -1 / 0, 1e20, -1e20, 3e9, -3e9, 255.9, 256.5, -0.5, -1.5, -0.0, 1.7,
                       127.5, -128.5, 65535.9, 2 ^ 63, -2 ^ 63, 2 ^ 64, 42 }
    local dtypes = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64" }
    for _, from in ipairs({ "float64", "float32", "int64", "uint8", "bool" }) do
      local data = luda.array(specials, "float64"):astype(from)
      for _, to in ipairs(dtypes) do
        local function run(x)
          local whole = x:astype(to)                          -- contiguous, converted
          local back = x:slice("::-3"):copy():astype(to)      -- strided, reversed
          local wide = luda.zeros({ 2, 3, #specials }, to)
          luda.copyto(wide, x)                                -- broadcast
          return whole, back, wide
        end
        local g = luda.graph(run, luda.zeros(#specials, from))
        local got = { g(data) }
        local want = { run(data) }
        for i = 1, 3 do H.check(got[i], H.read(want[i]), H.exact, from .. " to " .. to .. ", result " .. i) end
      end
    end
    -- Over its own memory, strided: every element read before any is written.
    local function reverse(x) luda.copyto(x:slice("::-1"), x) end
    local g = luda.graph(reverse, luda.zeros(7, "float32"))
    local x = H.to_array(H.uniform({ 7 }, -4, 4), "float32")
    local want = x:copy()
    reverse(want)
    g(x)
    H.check(x, H.read(want), H.exact)
  end)

  on_devices("keeps the temporaries in graph memory on a GPU", function(device)
    local function run(a, b)
      local t = a * 2          -- temporaries: t, u and the sum's
      local u = t + b
      return (u * u):sum(1), a + 1
    end
    local g = luda.graph(run, luda.zeros({ 4, 3 }, "float64"), luda.zeros({ 4, 3 }, "float64"))
    local h = luda.graph(run, luda.zeros({ 4, 3 }, "float64"), luda.zeros({ 4, 3 }, "float64"))
    for _ = 1, 3 do  -- the two graphs' replays interleaved, each with new arguments
      local a, b = H.to_array(H.uniform({ 4, 3 }, -4, 4), "float64"), H.to_array(H.uniform({ 4, 3 }, -4, 4), "float64")
      local s1, p1 = g(a, b)
      local s2, p2 = h(b, a)
      local w1, q1 = run(a, b)
      local w2, q2 = run(b, a)
      H.check(s1, H.read(w1), H.exact)
      H.check(p1, H.read(q1), H.exact)
      H.check(s2, H.read(w2), H.exact)
      H.check(p2, H.read(q2), H.exact)
    end
    -- On a GPU each temporary is a mem-alloc node with its mem-free node; the cpu keeps
    -- them with the graph.
    assert.are.equal(device == "cpu" and 0 or 3, g:stats().allocs)
  end)

  on_devices("copies between the device and the host inside the graph", function()
    local dev = luda.current_device()
    local function run(x, h)
      local back = x:slice("::2"):to("cpu")   -- strided, device to host
      local up = h:to(dev)                    -- host to device
      return back, (up + x):to("cpu"), up * 2
    end
    local g = luda.graph(run, luda.zeros(6, "float32"), luda.zeros(6, "float32", { device = "cpu" }))
    for _ = 1, 2 do
      local x = H.to_array(H.uniform({ 6 }, -4, 4), "float32")
      local h = H.to_array(H.uniform({ 6 }, -4, 4), "float32"):to("cpu")
      local got, want = { g(x, h) }, { run(x, h) }
      for i = 1, 3 do
        assert.are.equal(want[i].device, got[i].device)
        H.check(got[i], H.read(want[i]), H.exact, "result " .. i)
      end
    end
    if dev.kind ~= "cpu" then
      local at = luda.zeros(1).device
      local msg = "a copy from a strided array on cpu to a contiguous array on " .. at .. " cannot be recorded in a " ..
                  "graph: the host's side of a copy between devices must be contiguous; copy it with x:copy() first"
      local h = luda.zeros(6, "float32", { device = "cpu" })
      assert.are.equal(here() .. msg, error_of(function() luda.graph(function(a) return a:slice("::2"):to(dev) end, h) end))
    end
  end)

  on_devices("checks the bounds of kernels that check them at each replay", function()
    local scatter = cuda.jit(function(a, idx)
      local i = cuda.grid(1)
      if i < idx.shape[1] then a[idx[i]] = 1.0 end
    end, { boundscheck = true })
    local function run(a, idx)
      scatter[{ 1, 4 }](a, idx)
      return a * 2
    end
    local g = luda.graph(run, luda.zeros(4, "float64"), luda.zeros(4, "int64"))
    local a = luda.zeros(4, "float64")
    H.check(g(a, luda.array({ 3, 1, 0, 2 }, "int64")), H.of({ 2, 2, 2, 2 }, { 4 }), H.exact)
    -- An index past the end: the eager call's error, raised by the replay that met it.
    local bad = luda.array({ 0, 1, 9, 3 }, "int64")
    local strip = function(e) return (e:gsub("^[^:]+:%d+: ", "")) end
    local eager = strip(error_of(function() run(luda.zeros(4, "float64"), bad) end))
    assert.truthy(eager:find("index 9 out of range", 1, true), eager)
    local where, err = here(), error_of(function() g(a, bad) end)
    assert.are.equal(where .. eager, err)
    -- The graph goes on replaying.
    local b = luda.zeros(4, "float64")
    H.check(g(b, luda.array({ 0, 0, 1, 1 }, "int64")), H.of({ 2, 2, 0, 0 }, { 4 }), H.exact)
  end)

  on_devices("keeps the kernels it calls, and runs every kind", function()
    local x0 = luda.array({ 1, 2, 3, 4, 5, 6, 7, 8 }, "float32")
    local g
    do
      local twice = luda.elementwise("float32 x", "float32 y", "y = 2 * x", "twice")
      local plus = luda.vectorize(function(a, b) return a + b end)
      local total = luda.reduction("float32 x", "float32 y", "x", "a + b", "y = a", "0", "total")
      local scale = cuda.jit(function(a, s)
        local i = cuda.grid(1)
        if i < a.shape[1] then a[i] = a[i] * s end
      end)
      g = luda.graph(function(x)
        local y = twice(x)
        scale[{ 1, 8 }](y, luda.float32(3))
        local z = plus(y, x)
        return z, total(z)
      end, x0)
    end
    collectgarbage()
    collectgarbage()
    local z, t = g(luda.array({ 8, 7, 6, 5, 4, 3, 2, 1 }, "float32"))
    H.check(z, H.of({ 56, 49, 42, 35, 28, 21, 14, 7 }, { 8 }), H.exact)
    H.check(t, H.of(252), H.exact)
    local kinds = {}
    for _, n in ipairs(g:nodes()) do kinds[#kinds + 1] = n.kind end
    assert.are.equal("kernel", kinds[1])
    assert.truthy(tostring(g):match("^<graph %(.-graph_spec%.lua:%d+%): %d+ nodes, %d+ edges, 1 variant>$"), tostring(g))
  end)
end)
