-- The order of float reductions (docs/kinds.md, "The order of a reduction"): on each device
-- it depends on the shape alone, so a result is bitwise the same for any LUDA_CPU_THREADS,
-- any split of the work and any run; it is as accurate as NumPy's pairwise sum; and the cpu
-- and cuda devices agree within the bound the docs state.
local luda = require "luda"
local support = require "support"
local device_test = support.device_tests(_ENV)
local needs_gpu = support.gpu_test(_ENV)

local U32, U64 = 2.0 ^ -24, 2.0 ^ -53

-- The cpu bound of docs/kinds.md: (19 + ceil(log2(ceil(n / 128)))) * u * sum |x|.
local function cpu_bound(n, u, abs_sum)
  local leaves = math.max(1, math.ceil(n / 128))
  return (19 + math.ceil(math.log(leaves, 2))) * u * abs_sum
end

-- The cuda bound of docs/kinds.md: (ceil(n / 2^20) + 40) * u * sum |x| (a reduction over
-- the last axis).
local function cuda_bound(n, u, abs_sum) return (math.ceil(n / 2 ^ 20) + 40) * u * abs_sum end

-- The exact-enough reference: the float64 values (as the array holds them) summed with
-- Neumaier's compensation on the host, and the sum of their magnitudes.
local function reference_sum(values)
  local s, c, a = 0.0, 0.0, 0.0
  for _, v in ipairs(values) do
    local t = s + v
    if math.abs(s) >= math.abs(v) then c = c + ((s - t) + v) else c = c + ((v - t) + s) end
    s = t
    a = a + math.abs(v)
  end
  return s + c, a
end

-- A float array of n values of both signs and several magnitudes, as a Lua list too.
local function random_values(n, dtype, seed)
  math.randomseed(seed)
  local t = {}
  for i = 1, n do t[i] = (math.random() - 0.3) * 10.0 ^ math.random(-3, 3) end
  local x = luda.array(t, dtype)
  return x, x:totable()
end

describe("float reductions add in a fixed order", function()
  it("a float32 sum of 1e7 times 0.1 is within 1e-6 of the exact sum (cpu)", function()
    local got = luda.with_device("cpu", function() return luda.full(1e7, 0.1, "float32"):sum():item() end)
    local exact = 1e7 * support.f32(0.1)
    assert.is_true(math.abs(got - exact) <= 1e-6 * exact, string.format("%.9g against %.9g", got, exact))
  end)

  device_test("sums are within the documented bound of the exact sum", function(device)
    local bound = device == "cpu" and cpu_bound or cuda_bound
    for _, case in ipairs({ { 0 }, { 1 }, { 7 }, { 128 }, { 129 }, { 1000 }, { 4097 }, { 100003 } }) do
      for _, dtype in ipairs({ "float32", "float64" }) do
        local n = case[1]
        local x, values = random_values(n, dtype, 1000 + n)
        local want, abs_sum = reference_sum(values)
        local got = x:sum():item()
        local u = dtype == "float32" and U32 or U64
        assert.is_true(math.abs(got - want) <= bound(n, u, abs_sum),
                       string.format("%s n=%d: %.17g against %.17g", dtype, n, got, want))
      end
    end
  end)

  it("the order depends on the shape alone: views, transposes and copies give the same bits (cpu)", function()
    luda.with_device("cpu", function()
      for _, shape in ipairs({ { 3, 1000 }, { 257, 129 }, { 1, 5000 }, { 700, 1 }, { 40, 300 } }) do
        local x = luda.random.random(shape, "float32", { seed = shape[1] * 7919 + shape[2] }) - 0.5
        local xt = x:transpose():copy()  -- C order: the reduced axis 0 of x is xt's last
        local same = function(a, b, what)
          assert.is_true(luda.all(luda.equal(a, b)):item(), what .. " for shape " .. table.concat(shape, "x"))
        end
        same(x:sum(1), xt:sum(2), "columns of x and rows of its transposed copy")
        same(x:sum(2), xt:sum(1), "rows of x and columns of its transposed copy")
        same(x:transpose():sum(2), x:sum(1), "a transposed view and its base")
        same(x:sum(), x:copy():reshape({ shape[1] * shape[2] }):sum(), "the full sum and the flat copy's")
        local strided = x:slice({}, { 1, shape[2], 2 })
        same(strided:sum(2), strided:copy():sum(2), "a strided view and its copy")
        same(x:mean(1), xt:mean(2), "means")
        same(x:var(2), xt:var(1), "variances")
      end
    end)
  end)

  -- Every float reduction, printed exactly (%a), by a child process per thread count.
  local SCRIPT = [[
local luda = require "luda"
local x = luda.random.random({ 1037, 2311 }, "float32", { seed = 11 }) - 0.5
local z = luda.random.random({ 300001 }, "float64", { seed = 12 })
local w = luda.array({ 1, 0 / 0, 2.5 }, "float32")
local c = (luda.random.random({ 50000 }, "float64", { seed = 13 }) * luda.complex(1, 2)):astype("complex64")
local out = {}
local function put(a)
  for _, v in ipairs(luda.ravel(a):astype("float64"):totable()) do out[#out + 1] = string.format("%a", v) end
end
put(x:sum()) put(x:sum(1)) put(x:sum(2)) put(x:mean()) put(x:var(1)) put(x:std(2))
put(z:sum()) put(z:prod()) put(luda.nansum(z)) put(luda.nanmean(w)) put(luda.dot(z, z))
put(x:slice({}, { 1, 2311, 3 }):sum(2)) put(luda.real(c:sum())) put(luda.imag(c:sum()))
print(table.concat(out, " "))
]]

  it("results are bitwise the same for any LUDA_CPU_THREADS (cpu)", function()
    local script = os.tmpname()
    support.write_file(script, SCRIPT)
    local first
    for _, threads in ipairs({ "1", "2", "3", "8" }) do
      local out, err, code = support.run_luda(support.quote(script), "", false,
                                              { LUDA_DEVICE = "cpu", LUDA_CPU_THREADS = threads })
      assert.are.equal(0, code, err)
      assert.is_true(#out > 1000, out .. err)
      if first then assert.are.equal(first, out, "LUDA_CPU_THREADS=" .. threads) else first = out end
    end
    os.remove(script)
  end)

  it("cpu and cuda agree within the documented bounds", needs_gpu(function()
    for _, n in ipairs({ 1, 1000, 4097, 1 << 20, 3000017 }) do
      for _, dtype in ipairs({ "float32", "float64" }) do
        local x, values = random_values(math.min(n, 200000), dtype, n)
        if n > 200000 then x = luda.tile(x, math.ceil(n / 200000)):slice({ 0, n }) end
        local _, abs_sum = reference_sum(values)
        abs_sum = abs_sum * math.ceil(n / 200000)
        local u = dtype == "float32" and U32 or U64
        local on_cpu = x:to("cpu"):sum():item()
        local on_gpu = x:to("cuda"):sum():item()
        local bound = cpu_bound(n, u, abs_sum) + cuda_bound(n, u, abs_sum)
        assert.is_true(math.abs(on_cpu - on_gpu) <= bound,
                       string.format("%s n=%d: cpu %.17g, cuda %.17g", dtype, n, on_cpu, on_gpu))
      end
    end
  end))

  it("cuda sums are bitwise the same from run to run", needs_gpu(function()
    local x = luda.random.random({ 3000017 }, "float32", { seed = 5, device = "cuda" })
    local m = luda.random.random({ 2000, 3000 }, "float32", { seed = 6, device = "cuda" })
    local first = { x:sum():item(), m:sum(0):totable(), m:sum(1):totable() }
    for _ = 1, 3 do
      assert.are.equal(first[1], x:sum():item())
      assert.are.same(first[2], m:sum(0):totable())
      assert.are.same(first[3], m:sum(1):totable())
    end
  end))
end)
