-- Each family of kernel builtins run on each device (the cpu target, and a GPU when one is
-- usable) and checked against a host reference on random inputs: thread indexing in 1, 2
-- and 3 dimensions, cuda.grid/gridsize, shared, dynamic shared and local arrays, every
-- atomic (returning the old value), warp shuffles and votes, and device print. The cuda
-- cases are pending, with the reason, without a GPU.
local luda = require "luda"
local support = require "support"
local cuda = luda.cuda
local on_devices = support.device_tests(_ENV)

local function random_ints(n, lo, hi)
  local t = {}
  for i = 1, n do t[i] = math.random(lo, hi) end
  return t
end

local function sorted(t)
  local c = table.move(t, 1, #t, 1, {})
  table.sort(c)
  return c
end

describe("builtins", function()
  on_devices("threadIdx, blockIdx, blockDim, gridDim, grid(3), gridsize(3) in 3-D", function()
    local k = cuda.jit(function(out)
      local x, y, z = cuda.grid(3)
      local nx, ny, nz = cuda.gridsize(3)
      local row = out[x + nx * (y + ny * z)]
      row[0], row[1], row[2] = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
      row[3], row[4], row[5] = cuda.blockIdx.x, cuda.blockIdx.y, cuda.blockIdx.z
      row[6], row[7], row[8] = cuda.blockDim.x, cuda.blockDim.y, cuda.blockDim.z
      row[9], row[10], row[11] = cuda.gridDim.x, cuda.gridDim.y, cuda.gridDim.z
      row[12], row[13], row[14] = x, y, z
    end)
    local g = { math.random(1, 3), math.random(1, 3), math.random(1, 3) }
    local b = { math.random(1, 8), math.random(1, 4), math.random(1, 4) }
    local nx, ny, nz = g[1] * b[1], g[2] * b[2], g[3] * b[3]
    local out = luda.full({ nx * ny * nz, 15 }, -1, "int64")
    k[{ grid = g, block = b }](out)
    local got = out:totable()
    for z = 0, nz - 1 do
      for y = 0, ny - 1 do
        for x = 0, nx - 1 do
          local want = { x % b[1], y % b[2], z % b[3], x // b[1], y // b[2], z // b[3],
                         b[1], b[2], b[3], g[1], g[2], g[3], x, y, z }
          assert.are.same(want, got[1 + x + nx * (y + ny * z)])
        end
      end
    end
  end)

  on_devices("grid(1), gridsize(1), grid(2), gridsize(2)", function()
    local k1 = cuda.jit(function(out) local i = cuda.grid(1) out[i] = cuda.gridsize(1) * 100000 + i end)
    local blocks, threads = math.random(2, 9), math.random(1, 8) * 32
    local out = luda.zeros(blocks * threads, "int64")
    k1[{ blocks, threads }](out)
    local got = out:totable()
    for i = 1, blocks * threads do assert.are.equal(blocks * threads * 100000 + i - 1, got[i]) end

    local k2 = cuda.jit(function(out)
      local x, y = cuda.grid(2)
      local w, h = cuda.gridsize(2)
      out[y][x] = (w * 1000 + h) * 1000000 + y * 1000 + x
    end)
    local g, b = { math.random(1, 4), math.random(1, 4) }, { math.random(1, 16), math.random(1, 16) }
    local w, h = g[1] * b[1], g[2] * b[2]
    local out2 = luda.zeros({ h, w }, "int64")
    k2[{ grid = g, block = b }](out2)
    local got2 = out2:totable()
    for y = 0, h - 1 do
      for x = 0, w - 1 do assert.are.equal((w * 1000 + h) * 1000000 + y * 1000 + x, got2[y + 1][x + 1]) end
    end
  end)

  on_devices("cuda.shared.array and cuda.syncthreads: each block reverses its slice", function()
    local k = cuda.jit(function(x, out)
      local s = cuda.shared.array(128, "float32")
      local t = cuda.threadIdx.x
      local i = cuda.grid(1)
      s[t] = x[i]
      cuda.syncthreads()
      out[i] = s[127 - t]
    end)
    local blocks = math.random(2, 8)
    local xs = {}
    for i = 1, blocks * 128 do xs[i] = support.f32(math.random() * 100 - 50) end
    local out = luda.zeros(blocks * 128, "float32")
    k[{ blocks, 128 }](luda.array(xs, "float32"), out)
    local got = out:totable()
    for blk = 0, blocks - 1 do
      for t = 0, 127 do assert.are.equal(xs[blk * 128 + (127 - t) + 1], got[blk * 128 + t + 1]) end
    end
  end)

  on_devices("a 2-D shared array with the dtype given as luda.int64", function()
    local k = cuda.jit(function(x, out)
      local s = cuda.shared.array({ 16, 17 }, luda.int64)
      local tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
      s[ty][tx] = x[ty][tx]
      cuda.syncthreads()
      out[ty][tx] = s[tx][ty] + s[ty][tx]
    end)
    local xs = support.random_table({ 16, 16 }, function() return math.random(-1000000, 1000000) end)
    local out = luda.zeros({ 16, 16 }, "int64")
    k[{ 1, { 16, 16 } }](luda.array(xs, "int64"), out)
    local got = out:totable()
    for i = 1, 16 do
      for j = 1, 16 do assert.are.equal(xs[j][i] + xs[i][j], got[i][j]) end
    end
  end)

  on_devices("cuda.shared.dynamic: sized at launch by shared = bytes", function()
    local k = cuda.jit(function(x, out)
      local s = cuda.shared.dynamic("float64")
      local t, n = cuda.threadIdx.x, cuda.blockDim.x
      local i = cuda.grid(1)
      s[t] = x[i]
      cuda.syncthreads()
      out[i] = s[n - 1 - t] * 2
    end)
    for _, threads in ipairs({ 64, 256 }) do
      local blocks = math.random(2, 5)
      local xs = {}
      for i = 1, blocks * threads do xs[i] = math.random() end
      local out = luda.zeros(blocks * threads, "float64")
      k[{ grid = { blocks }, block = { threads }, shared = threads * 8 }](luda.array(xs, "float64"), out)
      local got = out:totable()
      for blk = 0, blocks - 1 do
        for t = 0, threads - 1 do
          assert.are.equal(2 * xs[blk * threads + (threads - 1 - t) + 1], got[blk * threads + t + 1])
        end
      end
    end
  end)

  on_devices("cuda.local_array: a per-thread scratch array", function()
    local k = cuda.jit(function(x, out)
      local i = cuda.grid(1)
      if i < #x then
        local digits = cuda.local_array(20, "int32")
        local v, n = x[i], 0
        repeat
          digits[n] = v % 10
          v = v // 10
          n = n + 1
        until v == 0
        local r = 0
        for j = 0, n - 1 do r = r * 10 + digits[j] end  -- the decimal digits reversed
        out[i] = r
      end
    end)
    local n = 1000
    local xs = random_ints(n, 0, 999999999)
    local out = luda.zeros(n, "int64")
    k[{ (n + 127) // 128, 128 }](luda.array(xs, "int64"), out)
    local got = out:totable()
    for i = 1, n do assert.are.equal(tonumber((tostring(xs[i]):reverse())), got[i]) end
  end)

  describe("atomics return the old value", function()
    -- Every thread applies op to slot (i % nslots) with its own value; the old values it
    -- gets back are stored too. For commutative ops the final slots are exact; the old
    -- values of one slot, sorted, must be the states the slot passed through.
    local function contended(op, dtype, values, nslots, fold, init)
      local k = cuda.jit(op)
      local n = #values
      local slots = luda.full(nslots, init, dtype)
      local olds = luda.zeros(n, dtype)
      k[{ (n + 63) // 64, 64 }](slots, luda.array(values, dtype), olds)
      local want = {}
      for s = 1, nslots do want[s] = init end
      for i = 1, n do
        local s = (i - 1) % nslots + 1
        want[s] = fold(want[s], values[i])
      end
      return slots:totable(), olds:totable(), want
    end

    on_devices("add, sub on int32, int64, float32 (exact sums of small integers), float64", function()
      local add = function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.add(slots, i % #slots, v[i]) end end
      local sub = function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.sub(slots, i % #slots, v[i]) end end
      for _, dtype in ipairs({ "int32", "int64", "float32", "float64" }) do
        local values = random_ints(4096, -1000, 1000)
        local got, _, want = contended(add, dtype, values, 7, function(a, b) return a + b end, 5)
        assert.are.same(want, got)
        got, _, want = contended(sub, dtype, values, 3, function(a, b) return a - b end, 0)
        assert.are.same(want, got)
      end
    end)

    on_devices("add of 1 hands out each old value 0..n-1 once", function()
      local k = cuda.jit(function(counter, olds) local i = cuda.grid(1) olds[i] = cuda.atomic.add(counter, 0, 1) end)
      local counter, olds = luda.zeros(1, "int32"), luda.zeros(4096, "int32")
      k[{ 64, 64 }](counter, olds)
      local want = {}
      for i = 1, 4096 do want[i] = i - 1 end
      assert.are.same({ 4096 }, counter:totable())
      assert.are.same(want, sorted(olds:totable()))
    end)

    on_devices("min, max on int32, int64, float32, float64", function()
      local amin = function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.min(slots, i % #slots, v[i]) end end
      local amax = function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.max(slots, i % #slots, v[i]) end end
      for _, dtype in ipairs({ "int32", "int64", "float32", "float64" }) do
        local values = random_ints(3000, -1000000, 1000000)
        local got, _, want = contended(amin, dtype, values, 5, math.min, 0)
        assert.are.same(want, got)
        got, _, want = contended(amax, dtype, values, 5, math.max, 0)
        assert.are.same(want, got)
      end
    end)

    on_devices("and_, or_, xor on int32, int64 and uint32", function()
      local aand = function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.and_(slots, i % #slots, v[i]) end end
      local aor = function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.or_(slots, i % #slots, v[i]) end end
      local axor = function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.xor(slots, i % #slots, v[i]) end end
      for _, dtype in ipairs({ "int32", "int64", "uint32" }) do
        local lo = dtype == "uint32" and 0 or -2147483648
        local hi = dtype == "uint32" and 4294967295 or 2147483647
        -- and_ of many random values is soon 0: most threads set one extra bit of ~0.
        local ones = {}
        for i = 1, 1000 do ones[i] = ~(1 << math.random(0, 30)) & (dtype == "uint32" and 0xffffffff or -1) end
        local got, _, want = contended(aand, dtype, ones, 40, function(a, b) return a & b end, dtype == "uint32" and 0xffffffff or -1)
        assert.are.same(want, got)
        local values = random_ints(1000, lo, hi)
        got, _, want = contended(aor, dtype, values, 600, function(a, b) return a | b end, 0)
        assert.are.same(want, got)
        got, _, want = contended(axor, dtype, values, 3, function(a, b) return a ~ b end, 0)
        assert.are.same(want, got)
      end
    end)

    on_devices("exch: the old values and the final one are the initial one and every value written", function()
      local k = cuda.jit(function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.exch(slots, 0, v[i]) end end)
      for _, dtype in ipairs({ "int32", "int64", "float32", "float64" }) do
        local values = random_ints(2048, -1000000, 1000000)
        local slots, olds = luda.full(1, 12345678, dtype), luda.zeros(#values, dtype)
        k[{ 32, 64 }](slots, luda.array(values, dtype), olds)
        local seen = olds:totable()
        seen[#seen + 1] = slots:totable()[1]
        local all = table.move(values, 1, #values, 1, {})
        all[#all + 1] = 12345678
        assert.are.same(sorted(all), sorted(seen))
      end
    end)

    on_devices("cas: swaps only where the slot holds the compared value; a cas loop counts exactly", function()
      local k = cuda.jit(function(a, cmp, v, olds)
        local i = cuda.grid(1)
        if i < #a then olds[i] = cuda.atomic.cas(a, i, cmp[i], v[i]) end
      end)
      for _, dtype in ipairs({ "int32", "int64", "uint32", "float32", "float64" }) do
        local n = 1000
        local a, cmp, v = random_ints(n, 0, 1000000), {}, random_ints(n, 0, 1000000)
        for i = 1, n do cmp[i] = math.random(0, 1) == 0 and a[i] or a[i] + 1 end
        local arr, olds = luda.array(a, dtype), luda.zeros(n, dtype)
        k[{ (n + 127) // 128, 128 }](arr, luda.array(cmp, dtype), luda.array(v, dtype), olds)
        local got = arr:totable()
        for i = 1, n do assert.are.equal(a[i] == cmp[i] and v[i] or a[i], got[i]) end
        assert.are.same(a, olds:totable())
      end
      local count = cuda.jit(function(counter)
        local old = counter[0]
        while true do
          local seen = cuda.atomic.cas(counter, 0, old, old + 1)
          if seen == old then break end
          old = seen
        end
      end)
      local counter = luda.zeros(1, "int64")
      count[{ 16, 128 }](counter)
      assert.are.same({ 2048 }, counter:totable())
    end)

    on_devices("compare_and_swap(a, old, v) is cas on a[0] of a 1-d array (numba.cuda's)", function()
      -- Row i of a (n, 2) array is a 1-d view whose element 0 is a[i][0].
      local k = cuda.jit(function(a, cmp, v, olds)
        local i = cuda.grid(1)
        if i < #olds then olds[i] = cuda.atomic.compare_and_swap(a[i], cmp[i], v[i]) end
      end)
      for _, dtype in ipairs({ "int32", "int64", "uint32", "uint64", "float32", "float64" }) do
        local n = 500
        local a, cmp, v = {}, {}, random_ints(n, 0, 1000000)
        for i = 1, n do
          a[i] = { math.random(0, 1000000), 7 }
          cmp[i] = math.random(0, 1) == 0 and a[i][1] or a[i][1] + 1
        end
        local arr, olds = luda.array(a, dtype), luda.zeros(n, dtype)
        k[{ (n + 127) // 128, 128 }](arr, luda.array(cmp, dtype), luda.array(v, dtype), olds)
        local got, want_olds = arr:totable(), {}
        for i = 1, n do
          assert.are.same({ a[i][1] == cmp[i] and v[i] or a[i][1], 7 }, got[i])
          want_olds[i] = a[i][1]
        end
        assert.are.same(want_olds, olds:totable())
      end
      local count = cuda.jit(function(counter)
        local old = counter[0]
        while true do
          local seen = cuda.atomic.compare_and_swap(counter, old, old + 1)
          if seen == old then break end
          old = seen
        end
      end)
      local counter = luda.zeros(1, "uint32")
      count[{ 16, 128 }](counter)
      assert.are.same({ 2048 }, counter:totable())
    end)

    on_devices("nanmax, nanmin treat NaN as missing (numba.cuda's), return the old value", function()
      local amax = function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.nanmax(slots, i % #slots, v[i]) end end
      local amin = function(slots, v, olds) local i = cuda.grid(1) if i < #v then olds[i] = cuda.atomic.nanmin(slots, i % #slots, v[i]) end end
      local function nan_fold(pick)
        return function(a, b)
          if b ~= b then return a end
          if a ~= a then return b end
          return pick(a, b)
        end
      end
      for _, dtype in ipairs({ "int32", "int64", "uint32", "uint64", "float32", "float64" }) do
        local float = dtype:sub(1, 1) == "f"
        local lo = dtype:sub(1, 1) == "u" and 0 or -1000000
        local values = random_ints(3000, lo, 1000000)
        if float then
          for i = 1, #values, 3 do values[i] = 0 / 0 end
        end
        local init = float and 0 / 0 or 500000
        local got, _, want = contended(amax, dtype, values, 5, nan_fold(math.max), init)
        assert.are.same(want, got)
        got, _, want = contended(amin, dtype, values, 5, nan_fold(math.min), init)
        assert.are.same(want, got)
      end
      -- One thread per slot: each case of the rule, and the old value returned.
      local one = cuda.jit(function(slots, v, olds, which)
        local i = cuda.grid(1)
        if i < #v then
          if which[0] == 0 then olds[i] = cuda.atomic.nanmax(slots, i, v[i]) else olds[i] = cuda.atomic.nanmin(slots, i, v[i]) end
        end
      end)
      local nan = 0 / 0
      for _, dtype in ipairs({ "float32", "float64" }) do
        for which, want in ipairs({ { 3, 1, 5, 4 }, { 3, 1, 2, 4 } }) do
          local slots, olds = luda.array({ nan, 1, 5, nan }, dtype), luda.zeros(4, dtype)
          one[{ 1, 4 }](slots, luda.array({ 3, nan, 2, 4 }, dtype), olds, luda.array({ which - 1 }, "int32"))
          assert.are.same(want, slots:totable())
          local o = olds:totable()
          assert.are.same({ true, 1, 5, true }, { o[1] ~= o[1], o[2], o[3], o[4] ~= o[4] })
        end
      end
    end)

    on_devices("inc and dec wrap as CUDA's atomicInc / atomicDec (uint32, uint64)", function()
      local inc = cuda.jit(function(a, limit, olds) local i = cuda.grid(1) olds[i] = cuda.atomic.inc(a, 0, limit) end)
      local dec = cuda.jit(function(a, limit, olds) local i = cuda.grid(1) olds[i] = cuda.atomic.dec(a, 0, limit) end)
      local function step_inc(old, v) return old >= v and 0 or old + 1 end
      local function step_dec(old, v) return (old == 0 or old > v) and v or old - 1 end
      for _, dtype in ipairs({ "uint32", "uint64" }) do
        for _, case in ipairs({ { inc, step_inc }, { dec, step_dec } }) do
          local limit, start, n = math.random(5, 100), math.random(0, 120), 2048
          local a, olds = luda.full(1, start, dtype), luda.zeros(n, dtype)
          case[1][{ 32, 64 }](a, limit, olds)  -- a weak Lua integer: converted to the dtype
          -- The states do not depend on the order: the k-th operation sees f^k(start).
          local state, seen = start, {}
          for i = 1, n do seen[i] = state; state = case[2](state, limit) end
          assert.are.same({ state }, a:totable())
          assert.are.same(sorted(seen), sorted(olds:totable()))
        end
      end
    end)
  end)

  describe("warp functions", function()
    on_devices("shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync; laneid and warpsize", function()
      local k = cuda.jit(function(x, src, out)
        local i = cuda.grid(1)
        local v, lane = x[i], cuda.laneid
        local row = out[i]
        row[0] = cuda.shfl_sync(0xffffffff, v, src[i // cuda.warpsize])
        row[1] = cuda.shfl_up_sync(0xffffffff, v, 3)
        row[2] = cuda.shfl_down_sync(0xffffffff, v, 5)
        row[3] = cuda.shfl_xor_sync(0xffffffff, v, 6)
        row[4] = lane * 100 + cuda.warpsize
      end)
      local warps = 8
      local n = warps * 32
      local xs, srcs = random_ints(n, -1000000, 1000000), random_ints(warps, 0, 31)
      local out = luda.zeros({ n, 5 }, "int32")
      k[{ 2, n // 2 }](luda.array(xs, "int32"), luda.array(srcs, "int32"), out)
      local got = out:totable()
      for i = 0, n - 1 do
        local lane, base = i % 32, i - i % 32
        local up = lane >= 3 and xs[base + lane - 3 + 1] or xs[i + 1]
        local down = lane + 5 < 32 and xs[base + lane + 5 + 1] or xs[i + 1]
        assert.are.same({ xs[base + srcs[i // 32 + 1] + 1], up, down, xs[base + (lane ~ 6) + 1], lane * 100 + 32 },
                        got[i + 1])
      end
    end)

    on_devices("ballot_sync, all_sync, any_sync", function()
      local k = cuda.jit(function(x, out)
        local i = cuda.grid(1)
        local p = x[i] > 0
        local row = out[i]
        row[0] = cuda.ballot_sync(0xffffffff, p)
        if cuda.all_sync(0xffffffff, p) then row[1] = 1 else row[1] = 0 end
        if cuda.any_sync(0xffffffff, p) then row[2] = 1 else row[2] = 0 end
      end)
      local warps = 6
      local xs = {}
      for w = 0, warps - 1 do
        for lane = 0, 31 do  -- warp 0 all positive, warp 1 none, the others random
          xs[w * 32 + lane + 1] = w == 0 and math.random(1, 9) or w == 1 and -math.random(0, 9) or math.random(-5, 5)
        end
      end
      local out = luda.zeros({ warps * 32, 3 }, "int64")
      k[{ 1, warps * 32 }](luda.array(xs, "int32"), out)
      local got = out:totable()
      for w = 0, warps - 1 do
        local mask, all, any = 0, 1, 0
        for lane = 0, 31 do
          if xs[w * 32 + lane + 1] > 0 then mask = mask | (1 << lane); any = 1 else all = 0 end
        end
        for lane = 0, 31 do assert.are.same({ mask, all, any }, got[w * 32 + lane + 1]) end
      end
    end)
  end)

  describe("warp matching and lane masks", function()
    -- Each lane: activemask, lanemask_lt, match_any_sync and match_all_sync over the lanes
    -- that exist, and match_any_sync over the even ones (inside a branch they alone take).
    local k = cuda.jit(function(x, out)
      local i = cuda.grid(1)
      local mask = cuda.activemask()
      local row = out[i]
      row[0], row[1] = mask, cuda.lanemask_lt()
      row[2] = cuda.match_any_sync(mask, x[i])
      local same, all = cuda.match_all_sync(mask, x[i])
      row[3] = same
      if all then row[4] = 1 else row[4] = 0 end
      if cuda.laneid % 2 == 0 then row[5] = cuda.match_any_sync(mask & 0x55555555, x[i]) end
    end)

    -- The reference: lanes hold the same value when their bits are equal (-0.0 is not 0.0).
    local function check(xs, got, threads, pack)
      for base = 0, threads - 1, 32 do
        local count = math.min(32, threads - base)
        local mask = count == 32 and 0xffffffff or (1 << count) - 1
        local bits = {}
        for lane = 0, count - 1 do bits[lane] = string.pack(pack, xs[base + lane + 1]) end
        local all = true
        for lane = 1, count - 1 do all = all and bits[lane] == bits[0] end
        for lane = 0, count - 1 do
          local any, even = 0, 0
          for other = 0, count - 1 do
            if bits[other] == bits[lane] then
              any = any | (1 << other)
              if other % 2 == 0 then even = even | (1 << other) end
            end
          end
          local want = { mask, (1 << lane) - 1, any, all and mask or 0, all and 1 or 0, lane % 2 == 0 and even or 0 }
          assert.are.same(want, got[base + lane + 1], ("lane %d of the warp at %d"):format(lane, base))
        end
      end
    end

    on_devices("match_any_sync, match_all_sync, activemask, lanemask_lt on int32, int64, float32, float64", function()
      local threads = 112  -- three full warps and a partial one of 16 lanes
      for dtype, pack in pairs({ int32 = "i4", int64 = "i8", float32 = "f", float64 = "d" }) do
        local pool = dtype:sub(1, 1) == "f" and { 0.0, -0.0, 1.5, -2.25 } or { 0, -1, 7, math.mininteger >> 40 }
        local xs = {}
        for t = 1, threads do
          local warp = (t - 1) // 32
          -- warp 0: one value throughout; the others: values drawn from a small pool
          xs[t] = warp == 0 and pool[3] or pool[math.random(1, #pool)]
        end
        local out = luda.zeros({ threads, 6 }, "int64")
        k[{ 1, threads }](luda.array(xs, dtype), out)
        check(xs, out:totable(), threads, pack)
      end
    end)

    -- A mask of all 32 lanes in a block whose last warp is partial: the lanes that do not
    -- exist never match (numba.cuda's answer in a block of 10 threads is 0x155 and 0x2aa,
    -- for values alternating by lane, not 0xfffffd55).
    local full = cuda.jit(function(x, out)
      local i = cuda.grid(1)
      local row = out[i]
      row[0], row[1] = cuda.activemask(), cuda.lanemask_lt()
      row[2] = cuda.match_any_sync(0xffffffff, x[i])
      local same, all = cuda.match_all_sync(0xffffffff, x[i])
      row[3] = same
      if all then row[4] = 1 else row[4] = 0 end
      if cuda.laneid % 2 == 0 then row[5] = cuda.match_any_sync(0x55555555, x[i]) end
    end)
    on_devices("match_any_sync and match_all_sync with a full mask count the lanes that exist", function()
      for _, threads in ipairs({ 10, 1, 31, 45 }) do
        local alternating, same = {}, {}
        for t = 1, threads do alternating[t], same[t] = t % 2, 7 end
        for _, xs in ipairs({ alternating, same }) do
          local out = luda.zeros({ threads, 6 }, "int64")
          full[{ 1, threads }](luda.array(xs, "int32"), out)
          check(xs, out:totable(), threads, "i4")
        end
      end
      local out = luda.zeros({ 10, 6 }, "int64")
      full[{ 1, 10 }](luda.array({ 0, 1, 0, 1, 0, 1, 0, 1, 0, 1 }, "int32"), out)
      assert.are.equal(0x155, out:totable()[1][3])
      assert.are.equal(0x2aa, out:totable()[2][3])
    end)
  end)

  describe("bit intrinsics (numba.cuda's popc, clz, ffs, brev, fns)", function()
    local DTYPES = { int8 = 8, int16 = 16, int32 = 32, int64 = 64, uint8 = 8, uint16 = 16, uint32 = 32, uint64 = 64 }
    -- A kernel per dtype: x (int64) converted to it (wrapping), each intrinsic's result stored
    -- into an int64 row (stores convert: a uint64 with its top bit set wraps negative).
    local function kernel(dtype)
      return cuda.jit(luda.load(([[
local luda = ...
local cuda = luda.cuda
return function(x, out)
  local i = cuda.grid(1)
  if i < #x then
    local v = luda.%s(x[i])
    local row = out[i]
    row[0], row[1], row[2], row[3] = cuda.popc(v), cuda.clz(v), cuda.ffs(v), cuda.brev(v)
  end
end]]):format(dtype), "=bits_" .. dtype)(luda))
    end
    -- The reference, on Lua's 64-bit integers: v is x's low `bits` bits.
    local function reference(x, bits, signed)
      local v = bits == 64 and x or x & ((1 << bits) - 1)
      local popc, top, low = 0, 0, 0
      for b = 0, bits - 1 do
        if (v >> b) & 1 == 1 then
          popc = popc + 1
          top = b + 1
          if low == 0 then low = b + 1 end
        end
      end
      -- brev works on uint32 (up to 32 bits; a signed value is sign-extended) or uint64.
      local width = bits == 64 and 64 or 32
      local wide = v
      if signed and bits < 64 and (v >> (bits - 1)) & 1 == 1 then wide = (v | (-1 << bits)) & 0xffffffff end
      local rev = 0
      for b = 0, width - 1 do rev = rev | (((wide >> b) & 1) << (width - 1 - b)) end
      return { popc, bits - top, low, rev }
    end

    on_devices("on every integer type, against a Lua reference, with 0, -1 and the type's limits", function()
      local xs = { 0, 1, -1, 2, 0x80, 0x7f, 0xff, 0x8000, 0x7fff, 0xffff, 0x80000000, 0x7fffffff, 0xffffffff,
                   math.mininteger, math.maxinteger, 0x100000000, 0x5555555555555555 }
      for _ = 1, 200 do xs[#xs + 1] = math.random(math.mininteger, math.maxinteger) >> math.random(0, 63) end
      for _ = 1, 50 do xs[#xs + 1] = 1 << math.random(0, 63) end
      local n = #xs
      for dtype, bits in pairs(DTYPES) do
        local out = luda.zeros({ n, 4 }, "int64")
        kernel(dtype)[{ (n + 63) // 64, 64 }](luda.array(xs, "int64"), out)
        local got = out:totable()
        for i = 1, n do
          assert.are.same(reference(xs[i], bits, dtype:sub(1, 1) == "i"), got[i], dtype .. " of " .. xs[i])
        end
      end
    end)

    -- cuda.fns against the PTX ISA's own statement of fns, written in Lua: the worked
    -- examples of the ISA, then random masks, every base (and bases past 31) and offsets.
    local function fns_reference(mask, base, offset)
      if base > 31 then return 0xffffffff end
      if offset == 0 then return (mask >> base) & 1 == 1 and base or 0xffffffff end
      local count, step, pos = math.abs(offset) - 1, offset > 0 and 1 or -1, base
      while pos >= 0 and pos < 32 do
        if (mask >> pos) & 1 == 1 then
          if count == 0 then return pos end
          count = count - 1
        end
        pos = pos + step
      end
      return 0xffffffff
    end

    on_devices("fns finds the n-th set bit from a base, as PTX's fns", function()
      local fns = cuda.jit(function(mask, base, offset, out)
        local i = cuda.grid(1)
        if i < #out then out[i] = cuda.fns(mask[i], base[i], offset[i]) end
      end)
      local masks = { 0xaaaaaaaa, 0xaaaaaaaa, 0xaaaaaaaa, 0xaaaaaaaa, 0, 0xffffffff, 1, 0x80000000 }
      local bases = { 3, 3, 2, 2, 0, 31, 0, 31 }
      local offsets = { 1, -1, 1, -1, 1, 1, 0, -32 }
      for _ = 1, 400 do
        masks[#masks + 1] = math.random(0, 0xffffffff) & math.random(0, 0xffffffff)
        bases[#bases + 1] = math.random(0, 40)
        offsets[#offsets + 1] = math.random(-34, 34)
      end
      local n = #masks
      local out = luda.zeros({ n }, "uint32")
      fns[{ (n + 63) // 64, 64 }](luda.array(masks, "uint32"), luda.array(bases, "uint32"),
        luda.array(offsets, "int32"), out)
      local got = out:totable()
      assert.are.same({ 3, 3, 3, 1 }, { got[1], got[2], got[3], got[4] })
      for i = 1, n do
        assert.are.equal(fns_reference(masks[i], bases[i], offsets[i]), got[i],
          ("fns(0x%x, %d, %d)"):format(masks[i], bases[i], offsets[i]))
      end
    end)
  end)

  on_devices("print writes from the device, Lua's way: values separated by tabs", function(device)
    local script = os.tmpname()
    local values = random_ints(4, -1000, 1000)
    support.write_file(script, ([[
local cuda = luda.cuda
local k = cuda.jit(function(x, y)
  local i = cuda.grid(1)
  print("thread", i, x[i], y[i])
end)
k[{1, 4}](luda.array({%s}, "int32"), luda.array({0.5, -2.25, 1024.125, 3.5}, "float64"))
cuda.synchronize()
]]):format(table.concat(values, ", ")))
    local out, err, code = support.run_luda(support.quote(script), nil, false, { LUDA_DEVICE = device })
    os.remove(script)
    assert.are.same({ "", 0 }, { err, code })
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    local ys = { 0.5, -2.25, 1024.125, 3.5 }
    local want = {}
    for i = 1, 4 do want[i] = table.concat({ "thread", i - 1, values[i], ys[i] }, "\t") end
    assert.are.same(sorted(want), sorted(lines))
  end)
end)
