-- luda.dist under mpirun: ctest runs this spec in busted inside `luda`, one per rank
-- (`mpirun -n 3 luda busted ... tests/lua/mpi/dist_spec.lua`, tests/CMakeLists.txt); it
-- holds for any number of ranks from two on. Every rank runs every test, in order; each
-- rank's data is a known function of its rank (a seeded stream of small numbers), so each
-- rank computes the expected results in plain Lua from every rank's data. Values are small
-- integers and halves, whose sums and products are exact whatever order MPI combines them
-- in. Where a test needs a rank other than 0 and 1 it takes the last one, LAST.
local luda = require "luda"
local support = require "support"
local dist = luda.dist

local error_of = support.error_of

local RANK, SIZE = dist.rank(), dist.size()
local LAST = SIZE - 1

-- Each behaviour on the cpu device and on this rank's GPU, cuda:(rank % GPUs): with a GPU
-- per rank, cuda arrays move by NCCL; ranks that share one move them through host memory.
local GPUS = 0
for _, d in ipairs(support.gpu_missing() and {} or luda.devices()) do
  if tostring(d):match("cuda") then GPUS = GPUS + 1 end
end
local MY_GPU = GPUS > 0 and ("cuda:" .. RANK % GPUS) or nil
local function on_devices(name, body)
  it(name .. " [cpu]", function() luda.with_device("cpu", body, "cpu") end)
  it(name .. " [cuda]", function()
    if not MY_GPU then return pending(support.gpu_missing()) end
    luda.with_device(MY_GPU, body, MY_GPU)
  end)
end

-- The message of an error raised by a luda function, without its "file:line: ".
local function message_of(f)
  return (tostring(error_of(f)):gsub("^[^:]*:%d+: ", ""))
end

-- A stream of integers in [lo, hi], the same for the same seed on every rank (a 64-bit
-- LCG; Lua's integers wrap).
local function stream(seed)
  local s = seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
  return function(lo, hi)
    s = s * 6364136223846793005 + 1442695040888963407
    return lo + ((s >> 33) % (hi - lo + 1))
  end
end

-- Rank r's values for a test: n of `kind` from the stream of (salt, r). Their sums over 14
-- ranks or fewer are exact in each dtype the tests give them as (int8's sums of values up
-- to 9 are the first to overflow).
local function values(kind, r, n, salt)
  local next = stream(salt * 1000 + r)
  local t = {}
  for i = 1, n do
    if kind == "int" then t[i] = next(-9, 9)
    elseif kind == "small" then t[i] = next(-3, 3)
    elseif kind == "unsigned" then t[i] = next(0, 60)
    elseif kind == "half" then t[i] = next(-16, 16) / 2      -- halves up to 8
    elseif kind == "quarter" then t[i] = next(-8, 8) / 2     -- halves up to 4
    elseif kind == "bool" then t[i] = next(0, 2) ~= 0
    end
  end
  return t
end

-- Every rank's values combined element by element as `op` does.
local function reference(kind_values, op)
  local out = {}
  for i = 1, #kind_values[1] do
    local acc = kind_values[1][i]
    for r = 2, #kind_values do
      local v = kind_values[r][i]
      if type(acc) == "boolean" then
        if op == "sum" or op == "max" then acc = acc or v else acc = acc and v end
      elseif op == "sum" then acc = acc + v
      elseif op == "prod" then acc = acc * v
      elseif op == "max" then acc = math.max(acc, v)
      else acc = math.min(acc, v) end
    end
    out[i] = acc
  end
  return out
end

local function every_rank(f)
  local t = {}
  for r = 0, SIZE - 1 do t[r + 1] = f(r) end
  return t
end

-- x rounded to float16 or bfloat16 (11 or 8 significant bits, ties to even), for x in the
-- dtype's finite range.
local FORMATS = { float16 = { bits = 11, min_exp = -14 }, bfloat16 = { bits = 8, min_exp = -126 } }
local function rounded(x, dtype)
  local format = FORMATS[dtype]
  local a = math.abs(x)
  if a == 0 then return x end
  local e = 0  -- a's binary exponent: 2^e <= a < 2^(e + 1)
  while a >= 2.0 ^ (e + 1) do e = e + 1 end
  while a < 2.0 ^ e do e = e - 1 end
  -- The dtype's spacing there (fixed among the subnormals, below 2^min_exp).
  local step = 2.0 ^ (math.max(e, format.min_exp) - (format.bits - 1))
  local q = a / step
  local f = math.floor(q)
  if q - f > 0.5 or (q - f == 0.5 and f % 2 == 1) then f = f + 1 end
  return (x < 0 and -f or f) * step
end

-- Every result of adding `values` up in float16 in some order and grouping, each addition
-- rounded to float16.
local function float16_sums(values)
  if #values == 1 then return { values[1] } end
  local out = {}
  for i = 1, #values do
    for j = i + 1, #values do
      local rest = { rounded(values[i] + values[j], "float16") }
      for k = 1, #values do
        if k ~= i and k ~= j then rest[#rest + 1] = values[k] end
      end
      for _, sum in ipairs(float16_sums(rest)) do out[#out + 1] = sum end
    end
  end
  return out
end

-- The ranks from..to, in order (empty when from > to).
local function ranks(from, to)
  local t = {}
  for r = from, to do t[#t + 1] = r end
  return t
end

-- A sorted list of ranks as luda's messages name it: "rank 2", "ranks 0 and 2", "ranks 0,
-- 2 and 3", a run of three or more as "2 to 5" ("ranks 0 and 2 to 5").
local function ranks_text(list)
  local items, i = {}, 1
  while i <= #list do
    local j = i
    while list[j + 1] == list[j] + 1 do j = j + 1 end
    if j - i >= 2 then
      items[#items + 1] = list[i] .. " to " .. list[j]
    else
      for k = i, j do items[#items + 1] = tostring(list[k]) end
    end
    i = j + 1
  end
  local last = table.remove(items)
  return (#list == 1 and "rank " or "ranks ") .. (#items > 0 and table.concat(items, ", ") .. " and " or "") .. last
end

-- Every rank but this one, as luda's messages count them.
local OTHERS = SIZE == 2 and "the other rank" or ("the other %d ranks"):format(SIZE - 1)

local function busy_wait(seconds)
  local t = luda.clock()
  while luda.clock() - t < seconds do end
end

describe("luda.dist under mpirun", function()
  it("has the ranks the launcher started, two or more, each its own", function()
    -- The launcher tells each process the job's size and its rank (OpenMPI, then MPICH's PMI).
    local size = os.getenv("OMPI_COMM_WORLD_SIZE") or os.getenv("PMI_SIZE")
    local rank = os.getenv("OMPI_COMM_WORLD_RANK") or os.getenv("PMI_RANK")
    if size then assert.are.equal(tonumber(size), SIZE) end
    if rank then assert.are.equal(tonumber(rank), RANK) end
    assert.is_true(SIZE >= 2, "this spec needs two or more ranks (mpirun -n N, N >= 2)")
    local all = dist.allgather(luda.array(RANK, "int64", { device = "cpu" })):totable()
    assert.are.same(ranks(0, SIZE - 1), all)
  end)

  describe("allreduce", function()
    -- dtype, kind of values, ops
    local cases = {
      { "int32", "int", { "sum", "max", "min" } }, { "int32", "small", { "prod" } },
      { "int64", "int", { "sum", "max", "min" } }, { "int64", "small", { "prod" } },
      { "int8", "int", { "sum", "max", "min" } }, { "int16", "small", { "prod" } },
      { "uint8", "unsigned", { "max", "min" } }, { "uint32", "unsigned", { "sum", "max" } },
      { "uint64", "unsigned", { "sum", "prod", "min" } },
      { "float32", "half", { "sum", "prod", "max", "min" } },
      { "float64", "half", { "sum", "prod", "max", "min" } },
      { "float16", "half", { "sum", "prod", "max", "min" } },
      { "bfloat16", "half", { "sum", "max", "min" } }, { "bfloat16", "quarter", { "prod" } },
      { "bool", "bool", { "sum", "prod", "max", "min" } },
    }
    -- Rank r's values for `op`. A product of many ranks' values would outgrow the dtypes'
    -- exact range, so past the first three ranks a product's values are signs (1 where
    -- unsigned; bools stay): but for its sign, every product is that of three values at
    -- most, exact in float32, and within int16 for integers.
    local function op_values(kind, r, n, salt, op)
      local t = values(kind, r, n, salt)
      if op == "prod" and r >= 3 and kind ~= "bool" then
        for i, v in ipairs(t) do t[i] = v < 0 and -1 or 1 end
      end
      return t
    end
    on_devices("combines every dtype with every op it has", function()
      if SIZE > 14 then return pending("needs 14 ranks or fewer: int8 sums of values up to 9 overflow past 14") end
      for c, case in ipairs(cases) do
        local dtype, kind, ops = case[1], case[2], case[3]
        for o, op in ipairs(ops) do
          local salt = c * 10 + o
          local all = every_rank(function(r) return op_values(kind, r, 7, salt, op) end)
          local y = dist.allreduce(luda.array(all[RANK + 1], dtype), op)
          assert.are.equal(dtype, y.dtype)
          local want = reference(all, op)
          -- float16 and bfloat16 are combined in float32, exactly here, and rounded once.
          if FORMATS[dtype] then
            for i, v in ipairs(want) do want[i] = rounded(v, dtype) end
          end
          assert.are.same(want, y:totable(), dtype .. " " .. op)
        end
      end
    end)

    on_devices("combines complex128 and complex64 by sum and prod", function()
      for _, dtype in ipairs({ "complex128", "complex64" }) do
        for o, op in ipairs({ "sum", "prod" }) do
          local re = every_rank(function(r) return values("small", r, 5, 200 + o) end)
          local im = every_rank(function(r) return values("small", r, 5, 300 + o) end)
          -- Past the first three ranks (from re[4] on) a product's factors are units (1, i,
          -- -1 or -i), so that it stays exact in float32.
          if op == "prod" then
            for r = 4, SIZE do
              for i = 1, 5 do
                local k = (re[r][i] + 3) % 4 + 1  -- re is in -3..3
                re[r][i], im[r][i] = ({ 1, 0, -1, 0 })[k], ({ 0, 1, 0, -1 })[k]
              end
            end
          end
          local z = luda.array(re[RANK + 1], dtype) + luda.array(im[RANK + 1], dtype) * luda.complex(0, 1)
          local y = dist.allreduce(z, op)
          assert.are.equal(dtype, y.dtype)
          local want_re, want_im = {}, {}
          for i = 1, 5 do
            local a, b = re[1][i], im[1][i]
            for r = 2, SIZE do
              local c, d = re[r][i], im[r][i]
              if op == "sum" then a, b = a + c, b + d else a, b = a * c - b * d, a * d + b * c end
            end
            want_re[i], want_im[i] = a, b
          end
          assert.are.same(want_re, luda.real(y):totable())
          assert.are.same(want_im, luda.imag(y):totable())
        end
      end
    end)

    on_devices("reduces float16 in float32 and rounds once", function()
      -- Ranks 0, 1 and 2 give 1024, 0.5 and 2^-13, any others 0. Their sum, 1024.5 + 2^-13,
      -- is exact in float32 and rounds once to 1025 in float16, being past the tie. In
      -- float16, whatever the order, each addition loses the smaller value (a tie to 1024,
      -- kept even, or under half a step of 1024 or 0.5), and 1024 comes out. The sum of
      -- two ranks' values is one addition, rounded alike either way, so this takes three.
      if SIZE < 3 then
        return pending("needs 3 or more ranks: two ranks' float16 sum is one rounding, in float16 as in float32")
      end
      local given = { 1024, 0.5, 2 ^ -13 }
      local exact = 0  -- in Lua's float64, exact for these values
      for r = 1, SIZE do exact = exact + (given[r] or 0) end
      local want = rounded(exact, "float16")
      -- Adding 0 in float16 is exact, so every float16 order is one of these three values'.
      for _, sum in ipairs(float16_sums(given)) do
        assert.are_not.equal(want, sum, "a float16 reduction would give the float32 one's result")
      end
      local y = dist.allreduce(luda.array({ given[RANK + 1] or 0 }, "float16"))
      assert.are.equal("float16", y.dtype)
      assert.are.same({ want }, y:totable())
    end)

    on_devices("takes 0-d, empty and strided arrays", function()
      local s = dist.allreduce(luda.array(RANK + 1, "int64"), "prod")
      assert.are.same({}, s.shape)
      local factorial = 1  -- 1 * 2 * ... * SIZE
      for r = 1, SIZE do factorial = factorial * r end
      assert.are.equal(factorial, s:item())
      local e = dist.allreduce(luda.zeros({ 0, 3 }, "float32"), "max")
      assert.are.same({ 0, 3 }, e.shape)
      assert.are.equal("float32", e.dtype)
      -- A transposed array and every other row of one: combined in their own order.
      local all = every_rank(function(r) return values("int", r, 24, 50) end)
      local base = luda.array(all[RANK + 1], "int32"):reshape(4, 6)
      local want = luda.array(reference(all, "sum"), "int32"):reshape(4, 6)
      assert.are.same(want.T:totable(), dist.allreduce(base.T):totable())
      local rows = dist.allreduce(base:slice({ nil, nil, 2 }), "sum")
      assert.are.same(want:slice({ nil, nil, 2 }):totable(), rows:totable())
    end)

    it("moves a large array", function()
      local n = 1 << 20
      local x = luda.arange(n, "float64", { device = "cpu" }) + RANK
      local y = dist.allreduce(x)
      -- Element i is the sum over the ranks r of i + r: SIZE * i + (0 + 1 + ... + LAST).
      local rank_sum = 0
      for r = 0, LAST do rank_sum = rank_sum + r end
      local want = luda.arange(n, "float64", { device = "cpu" }) * SIZE + rank_sum
      assert.are.equal(0, (y - want):max():item())
    end)
  end)

  on_devices("broadcasts from each root", function()
    for root = 0, SIZE - 1 do
      local mine = values("int", RANK, 6, 60)
      local y = dist.broadcast(luda.array(mine, "int16"):reshape(2, 3), root)
      assert.are.same(luda.array(values("int", root, 6, 60), "int16"):reshape(2, 3):totable(), y:totable())
      assert.are.equal("int16", y.dtype)
    end
    local s = dist.broadcast(luda.array(RANK * 1.5), LAST)
    assert.are.equal(LAST * 1.5, s:item())
    assert.are.same({ 0 }, dist.broadcast(luda.zeros(0), 1).shape)
  end)

  on_devices("gathers every rank's array in rank order", function()
    local all = every_rank(function(r) return values("half", r, 6, 70) end)
    local x = luda.array(all[RANK + 1], "float32"):reshape(2, 3)
    local g = dist.allgather(x)
    assert.are.same({ SIZE, 2, 3 }, g.shape)
    for r = 1, SIZE do
      assert.are.same(luda.array(all[r], "float32"):reshape(2, 3):totable(), g:totable()[r])
    end
    assert.are.same(every_rank(function(r) return r ~= 1 end), dist.allgather(luda.array(RANK ~= 1)):totable())
    assert.are.same({ SIZE, 0 }, dist.allgather(luda.zeros(0, "int8")).shape)
    assert.are.same(every_rank(function(r) return 2 * r end), dist.allgather(luda.array(2 * RANK, "int32")):totable())
  end)

  on_devices("sends and receives around a ring", function()
    local next_rank, prev_rank = (RANK + 1) % SIZE, (RANK - 1) % SIZE
    local mine = luda.array(values("int", RANK, 5, 80), "float64")
    local buf = luda.zeros(5, "float64")
    -- Even ranks send first, odd ranks receive first, so that no send waits on a rank
    -- that is itself sending.
    if RANK % 2 == 0 then
      dist.send(mine, next_rank)
      assert.is_true(rawequal(buf, dist.recv(buf, prev_rank)))
    else
      dist.recv(buf, prev_rank)
      dist.send(mine, next_rank)
    end
    assert.are.same(values("int", prev_rank, 5, 80), buf:totable())
  end)

  it("matches messages by tag, into strided buffers", function()
    if RANK == 0 then
      dist.send(luda.array({ 1, 2, 3 }, "int32", { device = "cpu" }), 1, 7)
      dist.send(luda.array({ 4, 5, 6 }, "int32", { device = "cpu" }), 1, 8)
    elseif RANK == 1 then
      local grid = luda.zeros({ 3, 2 }, "int32", { device = "cpu" })
      dist.recv(grid:slice({}, 1), 0, 8)  -- the second column, a strided view
      dist.recv(grid:slice({}, 0), 0, 7)
      assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, grid:totable())
    end
    dist.barrier()
  end)

  it("keeps rank order after a message that does not fit the receiver's buffer", function()
    if RANK == 0 then
      dist.send(luda.array({ 1, 2, 3, 4 }, "float64", { device = "cpu" }), LAST)
      dist.send(luda.array({ 9, 8, 7 }, "float32", { device = "cpu" }), LAST)
    elseif RANK == LAST then
      local buf = luda.zeros(3, "float32", { device = "cpu" })
      assert.are.equal("luda.dist.recv: rank 0 sent float64 (4,) (tag 0), but buf is float32 (3,); recv's buf must have the dtype and shape of the array sent",
        message_of(function() dist.recv(buf, 0) end))
      dist.recv(buf, 0)
      assert.are.same({ 9, 8, 7 }, buf:totable())
    end
    dist.barrier()
  end)

  describe("info", function()
    it("names the rank, the job's size and the MPI library", function()
      local i = dist.info()
      assert.are.equal(RANK, i.rank)
      assert.are.equal(SIZE, i.size)
      assert.matches("MPI", i.mpi)
      -- NCCL either loads (its version) or there is a reason cuda arrays go through host memory.
      if i.nccl then assert.matches("^%d+%.%d+%.%d+$", i.nccl) else assert.is_string(i.host_reason) end
      if os.getenv("LUDA_NCCL") == "off" then
        assert.are.equal("NCCL is turned off by LUDA_NCCL=off (unset it to use NCCL)", i.host_reason)
      end
    end)

    it("says how cuda arrays moved: NCCL on the rank's GPU, else host memory and why", function()
      if not MY_GPU then return pending(support.gpu_missing()) end
      local x = luda.arange(4, "float32", { device = MY_GPU }) + RANK
      assert.are.same(dist.allreduce(x:to("cpu")):totable(), dist.allreduce(x):totable())
      local i = dist.info()
      if os.getenv("LUDA_NCCL") == "off" then
        assert.is_nil(i.nccl_device)
        assert.are.equal("NCCL is turned off by LUDA_NCCL=off (unset it to use NCCL)", i.host_reason)
      elseif GPUS >= SIZE and i.nccl then
        assert.are.equal(MY_GPU, i.nccl_device)
        assert.is_nil(i.host_reason)
      elseif GPUS < SIZE then
        assert.is_nil(i.nccl_device)
        assert.matches("use one GPU %(PCI [%x:]+ on .+%), and NCCL needs a GPU per rank", i.host_reason)
      else
        assert.is_string(i.host_reason)
      end
    end)

    on_devices("moves arrays that live on another device of the rank, and ones of every layout", function(device)
      -- An array on the cpu device of a rank whose collectives use NCCL, a transposed one,
      -- and a float16 one reduced in float32: each comes back on its own device.
      local all = every_rank(function(r) return values("half", r, 12, 90) end)
      local want = luda.array(reference(all, "sum"), "float64"):reshape(3, 4)
      local x = luda.array(all[RANK + 1], "float64"):reshape(3, 4)
      for k, y in ipairs({ x, x.T, x:astype("float16"), x:to("cpu") }) do
        local z = dist.allreduce(y, "sum")
        assert.are.equal(tostring(y.device), tostring(z.device))
        assert.are.equal(y.dtype, z.dtype)
        local w = k == 2 and want.T or want
        assert.are.same(w:astype(y.dtype):totable(), z:totable())
      end
      local g = dist.allgather(x.T)
      for r = 1, SIZE do
        assert.are.same(luda.array(all[r], "float64"):reshape(3, 4).T:totable(), g:totable()[r])
      end
      assert.are.same(luda.array(all[1], "float64"):reshape(3, 4).T:totable(), dist.broadcast(x.T, 0):totable())
    end)
  end)

  it("holds every rank at a barrier until the last arrives", function()
    dist.barrier()
    busy_wait(0.2 * RANK)
    local arrived = luda.clock()
    dist.barrier()
    local left = luda.clock()
    local all = dist.allgather(luda.array(arrived, "float64", { device = "cpu" })):max():item()
    assert.is_true(left >= all, ("rank %d left at %.4f, before the last arrival %.4f"):format(RANK, left, all))
  end)

  it("leaves the cpu device's containment of a faulting kernel in place once MPI has started", function()
    -- MPI_Init installs signal handlers of its own; luda's cpu guard must still see a fault.
    local k = luda.raw_kernel([[extern "C" __global__ void null(int* x, int z) { int* p = (int*)(long)z; *p = 1; }]], "null")
    local x = luda.zeros(4, "int32", { device = "cpu" })
    local message = message_of(function() k({ 1 }, { 1 }, { x, 0 }) end)
    assert.are.equal("raw_kernel 'null' crashed on the cpu device: invalid memory access at address 0x0 (SIGSEGV)",
      message:sub(1, 91))
    local want = reference(every_rank(function() return { 0, 1, 2 } end), "sum")
    assert.are.same(want, dist.allreduce(luda.arange(3, "int32", { device = "cpu" })):totable())
  end)

  describe("errors", function()
    it("names each rank's array when dtypes or shapes differ", function()
      local shape = RANK == 1 and { 3 } or { 4 }
      local x = luda.zeros(shape, "float64", { device = "cpu" })
      local not_1 = ranks(0, LAST)
      table.remove(not_1, 2)
      assert.are.equal(("luda.dist.allreduce: the ranks' arrays differ: %s gave float64 (4,), rank 1 gave float64 (3,); every rank must pass an array of the same dtype and shape"):format(ranks_text(not_1)),
        message_of(function() dist.allreduce(x) end))
      local y = luda.zeros({ 2, 2 }, RANK == LAST and "float32" or "int32", { device = "cpu" })
      local before_last = ranks_text(ranks(0, LAST - 1))
      assert.are.equal(("luda.dist.allgather: the ranks' arrays differ: %s gave int32 (2, 2), rank %d gave float32 (2, 2); every rank must pass an array of the same dtype and shape"):format(before_last, LAST),
        message_of(function() dist.allgather(y) end))
      assert.are.equal(("luda.dist.broadcast: the ranks' arrays differ: %s gave int32 (2, 2), rank %d gave float32 (2, 2); every rank must pass an array of the same dtype and shape"):format(before_last, LAST),
        message_of(function() dist.broadcast(y, 0) end))
    end)

    it("names each rank's call when ranks call different functions", function()
      local x = luda.zeros(2, "int32", { device = "cpu" })
      local call = RANK == 0 and function() dist.broadcast(x, 0) end or function() dist.allgather(x) end
      local fname = RANK == 0 and "luda.dist.broadcast" or "luda.dist.allgather"
      assert.are.equal(("%s: the ranks made different calls: rank 0 called luda.dist.broadcast, %s called luda.dist.allgather; every rank must make the same luda.dist calls in the same order"):format(fname, ranks_text(ranks(1, LAST))),
        message_of(call))
      assert.are.equal(("luda.dist.allreduce: the ranks asked for different operations: %s asked for sum, rank %d asked for min; every rank must pass the same op"):format(ranks_text(ranks(0, LAST - 1)), LAST),
        message_of(function() dist.allreduce(x, RANK == LAST and "min" or "sum") end))
    end)

    it("says which root, dest or source is out of range", function()
      local x = luda.zeros(2, "int32", { device = "cpu" })
      assert.are.equal(("luda.dist.broadcast: root %d is out of range: the job has %d ranks, 0 to %d (ranks count from 0)"):format(SIZE, SIZE, LAST),
        message_of(function() dist.broadcast(x, SIZE) end))
      assert.are.equal(("luda.dist.send: dest -1 is out of range: the job has %d ranks, 0 to %d (ranks count from 0)"):format(SIZE, LAST),
        message_of(function() dist.send(x, -1) end))
      assert.are.equal(("luda.dist.recv: source %d is this rank; a message to itself would wait for its own send: use x:copy() instead"):format(RANK),
        message_of(function() dist.recv(x, RANK) end))
      assert.are.equal("luda.dist.send: tag -2 is out of range: tags are 0 to ",
        message_of(function() dist.send(x, (RANK + 1) % SIZE, -2) end):match("^.-to "))
    end)

    it("cancels a recv that timed out, so that the next recv gets the message", function()
      dist.barrier()
      if RANK == 1 then
        local buf = luda.zeros(3, "float64", { device = "cpu" })
        assert.are.equal("luda.dist.recv: rank 1 waited 1 s for a message from rank 0 with tag 5; rank 0 must call luda.dist.send(x, 1, 5), or it is still busy: give the call a longer {timeout = s}, or set LUDA_DIST_TIMEOUT",
          message_of(function() dist.recv(buf, 0, 5, { timeout = 1 }) end))
        dist.recv(buf, 0, 5)
        assert.are.same({ 7, 8, 9 }, buf:totable())
      elseif RANK == 0 then
        busy_wait(2)
        dist.send(luda.array({ 7, 8, 9 }, "float64", { device = "cpu" }), 1, 5)
      end
      dist.barrier()
    end)

    it("ends a large send in an error when its receiver is late, and the receiver still gets it", function()
      dist.barrier()
      local n = 1 << 20  -- 8 MiB: MPI waits for the receiver before it moves the data
      if RANK == 0 then
        assert.are.equal(("luda.dist.send: rank 0 waited 1 s for rank %d to receive (tag 0); rank %d must call luda.dist.recv(buf, 0, 0), or it is still busy: give the call a longer {timeout = s}, or set LUDA_DIST_TIMEOUT"):format(LAST, LAST),
          message_of(function() dist.send(luda.arange(n, "float64", { device = "cpu" }), LAST, 0, { timeout = 1 }) end))
      elseif RANK == LAST then
        busy_wait(2)
        local buf = luda.zeros(n, "float64", { device = "cpu" })
        dist.recv(buf, 0)
        assert.are.equal(0, (buf - luda.arange(n, "float64", { device = "cpu" })):max():item())
      end
      dist.barrier()
    end)

    it("ends a call that some ranks skip in an error, and the late rank's next call says so", function()
      dist.barrier()
      local x = luda.arange(4, "float64", { device = "cpu" })
      if RANK < LAST then
        assert.are.equal(("luda.dist.allreduce: rank %d waited 2 s for %s to call luda.dist.allreduce too; every rank must make the same luda.dist calls in the same order (a call that some ranks skip never completes), or a rank is still busy: give the call a longer {timeout = s}, or set LUDA_DIST_TIMEOUT"):format(RANK, OTHERS),
          message_of(function() dist.allreduce(x, "sum", { timeout = 2 }) end))
      else
        busy_wait(4)  -- past the others' deadline: the last rank's next call meets their allreduce
        assert.are.equal(("luda.dist.barrier: the ranks made different calls: %s called luda.dist.allreduce, rank %d called luda.dist.barrier; every rank must make the same luda.dist calls in the same order"):format(ranks_text(ranks(0, LAST - 1)), LAST),
          message_of(function() dist.barrier() end))
      end
      -- The ranks' calls match again, and the process goes on.
      local want = reference(every_rank(function() return { 0, 1, 2, 3 } end), "sum")
      assert.are.same(want, dist.allreduce(x):totable())
      assert.are.equal(6, x:sum():item())
    end)
  end)
end)
