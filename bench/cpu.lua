-- The cpu target against its references, on this machine (no GPU needed); its
-- measurements, printed as a Markdown table for bench/RESULTS.md:
--   1. z = x * w + b over 16Mi float32 as a cuda.jit kernel on the cpu, against the same
--      loop in plain Lua 5.4 (over Lua tables: it must be at least 50x slower) and in
--      C++ (bench/cpu_baseline.cpp, compiled here by the host compiler with the flags the
--      cpu target gives kernels: luda must be within 2x of it);
--   2. the tiled 1024x1024 int32 transpose with cuda.syncthreads (examples/transpose.lua's
--      kernel), which must finish in under 2 s.
-- Times are the best of a few runs after a first call that compiles (shown apart).
--   build/luda bench/cpu.lua [n]       (LUDA_CXX / CXX choose the compiler, as for kernels)
local luda = require "luda"
local cuda = luda.cuda

local N = math.tointeger(tonumber(arg and arg[1])) or 16 * 1024 * 1024
local CPU = { device = "cpu" }
local HERE = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"

local function best_of(reps, fn)
  local best = math.huge
  for _ = 1, reps do
    local t0 = luda.clock()
    fn()
    best = math.min(best, luda.clock() - t0)
  end
  return best
end

local function shell(command)
  local p = assert(io.popen(command .. " 2>&1"))
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and code == 0
end

-- The compiler and flags of the cpu target (jit/compile/host_compiler.h), less -shared: the
-- baseline is a program, not a shared object.
local CXX = (os.getenv("LUDA_CXX") ~= "" and os.getenv("LUDA_CXX")) or (os.getenv("CXX") ~= "" and os.getenv("CXX")) or "c++"
local FLAGS = "-std=c++17 -O2 -fPIC -fno-math-errno" .. (os.getenv("LUDA_CPU_PORTABLE") == "1" and "" or " -march=native")

local cpu_model = (shell("grep -m1 'model name' /proc/cpuinfo"):match(":%s*(.-)%s*$")) or "unknown cpu"
local threads = os.getenv("LUDA_CPU_THREADS") or (shell("nproc"):match("%d+"))
local cxx_version = shell(CXX .. " --version"):match("^[^\n]*")
print(("cpu: %s, %s threads; compiler: %s; flags: %s"):format(cpu_model, threads, cxx_version, FLAGS))
print(("n = %d float32 (%.0f MiB per array)"):format(N, N * 4 / 2 ^ 20))
print()

---------------------------------------------------------------------------- 1. z = x * w + b
-- Exact in float32, and so is x * w: every implementation must give the same z bit for
-- bit (with or without a fused multiply-add), so the checksums must agree exactly.
local xs, ws, bs, zs = {}, {}, {}, {}
for i = 0, N - 1 do
  xs[i + 1] = (i % 1000) / 1024 - 0.5
  ws[i + 1] = (i % 7) * 0.25 + 0.5
  bs[i + 1] = (i % 13) * 0.125 - 0.75
  zs[i + 1] = 0.0
end
local function checksum(t)
  local s = 0.0
  for i = 1, #t do s = s + t[i] end
  return s
end

-- Plain Lua 5.4 over Lua tables.
local lua_s = best_of(3, function()
  for i = 1, N do zs[i] = xs[i] * ws[i] + bs[i] end
end)
local want = checksum(zs)

-- C++, compiled now.
local exe = os.tmpname()
local log, built = shell(("%s %s -o %s %s"):format(CXX, FLAGS, exe, HERE .. "cpu_baseline.cpp"))
assert(built, "compiling bench/cpu_baseline.cpp failed:\n" .. log)
local out, ran = shell(("%s %d 10"):format(exe, N))
os.remove(exe)
assert(ran, "cpu_baseline failed:\n" .. out)
local cxx_ms, cxx_sum = out:match("^(%S+) (%S+)")
local cxx_s = tonumber(cxx_ms) / 1e3
assert(tonumber(cxx_sum) == want, ("the C++ checksum %s differs from plain Lua's %.17g"):format(cxx_sum, want))

-- luda: one CUDA thread per element (the usual CUDA form), and a grid-stride loop over a
-- small grid (Numba's add_kernel form: fewer, longer threads).
local layer = cuda.jit(function(x, w, b, z)
  local i = cuda.grid(1)
  if i < #x then z[i] = x[i] * w[i] + b[i] end
end)
local layer_stride = cuda.jit(function(x, w, b, z)
  local start, stride = cuda.grid(1), cuda.gridsize(1)
  for i = start, #x - 1, stride do z[i] = x[i] * w[i] + b[i] end
end)
local x, w, b = luda.array(xs, "float32", CPU), luda.array(ws, "float32", CPU), luda.array(bs, "float32", CPU)
local z = luda.zeros(N, "float32", CPU)

local function run_luda(kernel, config)
  local t0 = luda.clock()
  kernel[config](x, w, b, z)
  cuda.synchronize()
  local first = luda.clock() - t0
  local got = checksum(z:totable())
  assert(got == want, ("%s gives checksum %.17g, plain Lua %.17g"):format(kernel.name, got, want))
  luda.copyto(z, 0)
  local best = best_of(10, function() kernel[config](x, w, b, z); cuda.synchronize() end)
  return first, best
end
local per_elem_cfg = { (N + 255) // 256, 256 }
local first1, luda1 = run_luda(layer, per_elem_cfg)
local first2, luda2 = run_luda(layer_stride, { 64, 256 })

-- The same loop as CuPy's ElementwiseKernel (the kind a user writes for this): its cpu
-- template runs chunks of the array on the pool as plain loops, streaming a large output.
local layer_kind = luda.elementwise("T x, T w, T b", "T z", "z = x * w + b", "layer")
local t_kind = luda.clock()
layer_kind(x, w, b, z)
local first3 = luda.clock() - t_kind
do
  local got = checksum(z:totable())
  assert(got == want, ("elementwise gives checksum %.17g, plain Lua %.17g"):format(got, want))
end
local luda3 = best_of(10, function() layer_kind(x, w, b, z) end)

----------------------------------------------------------------- 2. the tiled transpose
local TILE, TILE_PADDED = 32, 33
local transpose_tiled = cuda.jit(function(a, out)
  local tile = cuda.shared.array({TILE, TILE_PADDED}, "int32")
  local tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
  local x = cuda.blockIdx.x * TILE + tx
  local y = cuda.blockIdx.y * TILE + ty
  if y < a.shape[1] and x < a.shape[2] then
    tile[ty][tx] = a[y][x]
  end
  cuda.syncthreads()
  x = cuda.blockIdx.y * TILE + tx
  y = cuda.blockIdx.x * TILE + ty
  if y < out.shape[1] and x < out.shape[2] then
    out[y][x] = tile[tx][ty]
  end
end)
local R = 1024
local a = luda.arange(R * R, "int32", CPU):reshape(R, R)
local t = luda.empty({ R, R }, "int32", CPU)
local tcfg = { grid = { R // TILE, R // TILE }, block = { TILE, TILE } }
local t0 = luda.clock()
transpose_tiled[tcfg](a, t)
cuda.synchronize()
local tfirst = luda.clock() - t0
local tt, at = t:totable(), a:totable()
for i = 1, R, 7 do
  for j = 1, R, 3 do
    assert(tt[j][i] == at[i][j], ("transpose: out[%d][%d] = %d, a[%d][%d] = %d"):format(j - 1, i - 1, tt[j][i], i - 1, j - 1, at[i][j]))
  end
end
local tbest = best_of(5, function() transpose_tiled[tcfg](a, t); cuda.synchronize() end)

---------------------------------------------------------------------------- the table
local function ms(s) return ("%.1f ms"):format(s * 1e3) end
local function verdict(ok) return ok and "yes" or "**NO**" end
print("| measurement | time | ratio | criterion | met |")
print("| --- | ---: | --- | --- | --- |")
print(("| z = x*w+b, %dMi float32: plain Lua 5.4 loop over tables | %s | | | |"):format(N // 2 ^ 20, ms(lua_s)))
print(("| same loop in C++ (bench/cpu_baseline.cpp, %s) | %s | | | |"):format(FLAGS, ms(cxx_s)))
for _, row in ipairs({
  { ("cuda.jit on cpu, one thread per element {%d, 256}"):format(per_elem_cfg[1]), luda1, first1 },
  { "cuda.jit on cpu, grid-stride loop {64, 256}", luda2, first2 },
  { "luda.elementwise on cpu (z = x * w + b)", luda3, first3 },
}) do
  local speedup, vs_cxx = lua_s / row[2], row[2] / cxx_s
  print(("| %s | %s (first call, compiling: %s) | %.0fx plain Lua; %.2fx the C++ time | >= 50x; <= 2x | %s; %s |"):format(
    row[1], ms(row[2]), ms(row[3]), speedup, vs_cxx, verdict(speedup >= 50), verdict(vs_cxx <= 2)))
end
print(("| tiled %dx%d int32 transpose with syncthreads (fibers) | %s (first call, compiling: %s) | | < 2 s | %s |"):format(
  R, R, ms(tbest), ms(tfirst), verdict(tbest < 2 and tfirst < 2)))
