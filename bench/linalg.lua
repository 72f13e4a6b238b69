-- Linear algebra on one device (bench/linalg.sh runs it beside CuPy and NumPy):
--   matmul of two n x n float32, float16 and bfloat16 matrices (n = 8192 on a GPU), in
--   TFLOP/s;
--   dot of two 2048 x 2048 float32 matrices, the CuPy guide's timing, on this device and on
--   the cpu (OpenBLAS);
--   the host's cost of a linear-algebra call: matmul of two 16 x 16 matrices back to back;
--   svd of a 10000 x 1000 float64 matrix, thin (full_matrices = false), and of a 1000 x 1000
--   one, with the accuracy of the factors: U and V's distance from orthonormal and
--   U S Vh's from the matrix (bench/linalg_peers.py compares S with NumPy's);
--   qr of the 10000 x 1000 matrix and eigh of a 2048 x 2048 symmetric one.
-- The SVD is timed under the cuSOLVER routines LUDA_SVD_SMALL and LUDA_SVD_TALL choose
-- (docs/linalg.md); --svd runs only the SVD figures, for linalg.sh to run each choice.
-- With LUDA_BENCH_OUT set, the SVD's matrix and singular values are written there as raw
-- float64 (svd_a.f64, svd_s_<routines>.f64) for the NumPy comparison.
-- Prints one line per figure and "@@ key value" lines for scripts.
--   build/luda bench/linalg.lua [--smoke | --svd]      (--smoke: small sizes, any device)
local luda = require "luda"

local smoke = arg and arg[1] == "--smoke"
local svd_only = arg and arg[1] == "--svd"
local dev = luda.current_device()
local on_gpu = dev.kind ~= "cpu"


local time = dofile("bench/timing.lua").time

if not svd_only then
  local n = smoke and 256 or (on_gpu and 8192 or 2048)
  -- float32 always; the 16-bit floats on a GPU (the cpu multiplies them through float32)
  -- and in the smoke run. Each element's rounding: float32 sums of n products, then the
  -- result's own rounding.
  local unit = { float32 = 0, float16 = 2 ^ -11, bfloat16 = 2 ^ -8 }
  local function bench_matmul(dtype)
    local a = luda.random.random({ n, n }):astype(dtype)
    local b = luda.random.random({ n, n }):astype(dtype)
    local c = luda.empty({ n, n }, dtype)
    local ms = time(function() luda.matmul(a, b, { out = c }) end, smoke and 3 or 10)
    -- A few elements against row-times-column sums of luda's own kernels.
    for _, at in ipairs({ { 0, 0 }, { n - 1, n // 3 }, { n // 2, n - 1 } }) do
      local i, j = at[1], at[2]
      local row, col = a:slice(("%d:%d, :"):format(i, i + 1)), b:slice((":, %d:%d"):format(j, j + 1)):transpose()
      local want = (row:astype("float64") * col:astype("float64")):sum():item()
      local got = c:slice(("%d:%d, %d:%d"):format(i, i + 1, j, j + 1)):astype("float64"):sum():item()
      assert(math.abs(got - want) <= (n * 2 ^ -22 + unit[dtype]) * math.abs(want),
        ("matmul %s element (%d, %d) is %g, expected %g"):format(dtype, i, j, got, want))
    end
    local tflops = 2 * n ^ 3 / (ms * 1e-3) / 1e12
    local short = dtype == "float32" and "f32" or dtype == "float16" and "f16" or "bf16"
    print(("matmul %d x %d %s on %s: %.3f ms, %.1f TFLOP/s"):format(n, n, dtype, dev.name, ms, tflops))
    print(("@@ matmul_%s_%d_ms %.4f\n@@ matmul_%s_%d_tflops %.3f"):format(short, n, ms, short, n, tflops))
  end
  for _, dtype in ipairs((on_gpu or smoke) and { "float32", "float16", "bfloat16" } or { "float32" }) do
    -- one dtype's failure is reported and the others still run
    local ok, err = pcall(bench_matmul, dtype)
    if not ok then print(("matmul %s failed: %s"):format(dtype, err)) end
    if not ok and smoke then error(err) end
  end

  local m = smoke and 128 or 2048
  for _, where in ipairs(on_gpu and { "gpu", "cpu" } or { "cpu" }) do
    local x = luda.random.random({ m, m }):astype("float32")
    local y = luda.random.random({ m, m }):astype("float32")
    if where == "cpu" then x, y = x:to("cpu"), y:to("cpu") end
    local t = time(function() luda.dot(x, y) end, smoke and 3 or 10, where)
    print(("dot %d x %d float32 on %s: %.3f ms"):format(m, m, where, t))
    print(("@@ dot_f32_%d_%s_ms %.4f"):format(m, where, t))
  end

  -- The cost of a call: 2000 small products, waited for once.
  local s = 16
  local p, q, r = luda.ones({ s, s }, "float32"), luda.ones({ s, s }, "float32"), luda.empty({ s, s }, "float32")
  local calls = smoke and 100 or 2000
  local per = time(function() for _ = 1, calls do luda.matmul(p, q, { out = r }) end end, 5) / calls * 1e3
  print(("matmul %d x %d, %d calls back to back: %.2f us a call"):format(s, s, calls, per))
  print(("@@ matmul_small_us %.3f"):format(per))
end

-- ---- svd, qr, eigh --------------------------------------------------------------------

-- The largest |x| of an array, on its device.
local function amax(x) return luda.abs(x):max():item() end

-- Writes a float64 array's elements (C order) to `path` as raw little-endian doubles.
local function write_f64(path, x)
  local t = x:totable()
  local f = assert(io.open(path, "wb"))
  if type(t[1]) == "table" then
    local format = "<" .. ("d"):rep(#t[1])
    for _, row in ipairs(t) do f:write(string.pack(format, table.unpack(row))) end
  else
    f:write(string.pack("<" .. ("d"):rep(#t), table.unpack(t)))
  end
  f:close()
end

local routines = on_gpu and ((os.getenv("LUDA_SVD_SMALL") or "gesvdp") .. "_" .. (os.getenv("LUDA_SVD_TALL") or "ormqr"))
                 or "lapacke"
local out_dir = os.getenv("LUDA_BENCH_OUT")
local reps = smoke and 3 or 5

-- The thin SVD of an m x n float64 matrix: its time, and how far U and V are from
-- orthonormal and U S Vh from the matrix, relative to its largest element.
local function svd_figures(m, n, write)
  local a = luda.random.random({ m, n }, "float64", { seed = 2026 })
  local ms = time(function() luda.linalg.svd(a, { full_matrices = false }) end, reps)
  local u, s, vh = luda.linalg.svd(a, { full_matrices = false })
  local k = math.min(m, n)
  local u_orth = amax(luda.matmul(u.T, u) - luda.eye(k))
  local v_orth = amax(luda.matmul(vh, vh.T) - luda.eye(k))
  local recon = amax(luda.matmul(u * s, vh) - a) / amax(a)
  print(("svd %d x %d float64 thin (%s) on %s: %.3f ms; |U^T U - I| %.2e, |V^T V - I| %.2e, |U S Vh - A| / |A| %.2e")
        :format(m, n, routines, dev.name, ms, u_orth, v_orth, recon))
  local key = ("svd_f64_%dx%d_%s"):format(m, n, routines)
  print(("@@ %s_ms %.4f\n@@ %s_u_orth %.3e\n@@ %s_v_orth %.3e\n@@ %s_recon %.3e"):format(key, ms, key, u_orth, key,
                                                                                           v_orth, key, recon))
  if out_dir and write then
    if write == "matrix" then write_f64(out_dir .. ("/svd_a_%dx%d.f64"):format(m, n), a) end
    write_f64(out_dir .. ("/svd_s_%dx%d_%s.f64"):format(m, n, routines), s)
  end
end

local tall_m, tall_n = smoke and 200 or 10000, smoke and 20 or 1000
svd_figures(tall_m, tall_n, svd_only and "values" or "matrix")
svd_figures(tall_n, tall_n, svd_only and "values" or "matrix")

if not svd_only then
  local a = luda.random.random({ tall_m, tall_n }, "float64", { seed = 2027 })
  local ms = time(function() luda.linalg.qr(a) end, reps)
  local q, r = luda.linalg.qr(a)
  local err = amax(luda.matmul(q, r) - a) / amax(a)
  print(("qr %d x %d float64 reduced on %s: %.3f ms; |Q R - A| / |A| %.2e"):format(tall_m, tall_n, dev.name, ms, err))
  print(("@@ qr_f64_%dx%d_ms %.4f\n@@ qr_f64_%dx%d_recon %.3e"):format(tall_m, tall_n, ms, tall_m, tall_n, err))
  local e = smoke and 64 or 2048
  local b = luda.random.random({ e, e }, "float64", { seed = 2028 })
  local sym = b + b.T
  ms = time(function() luda.linalg.eigh(sym) end, reps)
  local w, v = luda.linalg.eigh(sym)
  err = amax(luda.matmul(sym, v) - v * w) / amax(sym)
  print(("eigh %d x %d float64 on %s: %.3f ms; |A V - V W| / |A| %.2e"):format(e, e, dev.name, ms, err))
  print(("@@ eigh_f64_%d_ms %.4f\n@@ eigh_f64_%d_resid %.3e"):format(e, ms, e, err))
end
