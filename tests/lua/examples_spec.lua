-- examples/*.lua run by the luda binary (LUDA_BIN) on each device, chosen by LUDA_DEVICE
-- (the cpu target always, a GPU when one is usable): quickstart, raw_kernel and
-- raw_module, sobel_graph, chunked_add and chunked_svd, and the kernel kinds' vectorize, elementwise, reduction and fuse, whose
-- printed arrays must be the ones NumPy prints for CuPy's guide and Numba's tutorial (the
-- expected text below is numpy's repr of the same arrays). With no LUDA_DEVICE, quickstart
-- runs on the default device and, without a GPU, says once on stderr that it runs on the
-- cpu.
local support = require "support"
local quote = support.quote
local SOURCE = os.getenv("LUDA_SOURCE_DIR") or "."

local function example(name) return quote(SOURCE .. "/examples/" .. name) end
local function luda(args, device) return support.run_luda(args, nil, false, device and { LUDA_DEVICE = device }) end

local function contains(haystack, needle)
  assert(haystack:find(needle, 1, true), "expected the output to contain:\n" .. needle ..
         "\n--- but it was:\n" .. haystack)
end

-- Registers `name [device]` for each target device; body(device) runs where it can.
local function on_devices(name, body)
  for _, device in ipairs(support.TARGETS) do
    it(name .. " [" .. device .. "]", function()
      local why = support.device_missing(device)
      if why then return pending(why) end
      body(device)
    end)
  end
end

-- numpy: repr((2 * np.arange(100, dtype=np.float32)).reshape(10, 10))
local TWICE_ARANGE = [=[
array([[  0.,   2.,   4.,   6.,   8.,  10.,  12.,  14.,  16.,  18.],
       [ 20.,  22.,  24.,  26.,  28.,  30.,  32.,  34.,  36.,  38.],
       [ 40.,  42.,  44.,  46.,  48.,  50.,  52.,  54.,  56.,  58.],
       [ 60.,  62.,  64.,  66.,  68.,  70.,  72.,  74.,  76.,  78.],
       [ 80.,  82.,  84.,  86.,  88.,  90.,  92.,  94.,  96.,  98.],
       [100., 102., 104., 106., 108., 110., 112., 114., 116., 118.],
       [120., 122., 124., 126., 128., 130., 132., 134., 136., 138.],
       [140., 142., 144., 146., 148., 150., 152., 154., 156., 158.],
       [160., 162., 164., 166., 168., 170., 172., 174., 176., 178.],
       [180., 182., 184., 186., 188., 190., 192., 194., 196., 198.]],
      dtype=float32)
]=]
-- numpy: repr((np.arange(100, dtype=np.float32) + 1).reshape(10, 10))
local ARANGE_PLUS_ONE = [=[
array([[  1.,   2.,   3.,   4.,   5.,   6.,   7.,   8.,   9.,  10.],
       [ 11.,  12.,  13.,  14.,  15.,  16.,  17.,  18.,  19.,  20.],
       [ 21.,  22.,  23.,  24.,  25.,  26.,  27.,  28.,  29.,  30.],
       [ 31.,  32.,  33.,  34.,  35.,  36.,  37.,  38.,  39.,  40.],
       [ 41.,  42.,  43.,  44.,  45.,  46.,  47.,  48.,  49.,  50.],
       [ 51.,  52.,  53.,  54.,  55.,  56.,  57.,  58.,  59.,  60.],
       [ 61.,  62.,  63.,  64.,  65.,  66.,  67.,  68.,  69.,  70.],
       [ 71.,  72.,  73.,  74.,  75.,  76.,  77.,  78.,  79.,  80.],
       [ 81.,  82.,  83.,  84.,  85.,  86.,  87.,  88.,  89.,  90.],
       [ 91.,  92.,  93.,  94.,  95.,  96.,  97.,  98.,  99., 100.]],
      dtype=float32)
]=]
-- numpy: repr(np.arange(100, dtype=np.float32).reshape(10, 10))
local ARANGE = [=[
array([[ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9.],
       [10., 11., 12., 13., 14., 15., 16., 17., 18., 19.],
       [20., 21., 22., 23., 24., 25., 26., 27., 28., 29.],
       [30., 31., 32., 33., 34., 35., 36., 37., 38., 39.],
       [40., 41., 42., 43., 44., 45., 46., 47., 48., 49.],
       [50., 51., 52., 53., 54., 55., 56., 57., 58., 59.],
       [60., 61., 62., 63., 64., 65., 66., 67., 68., 69.],
       [70., 71., 72., 73., 74., 75., 76., 77., 78., 79.],
       [80., 81., 82., 83., 84., 85., 86., 87., 88., 89.],
       [90., 91., 92., 93., 94., 95., 96., 97., 98., 99.]], dtype=float32)
]=]

-- examples/vectorize.lua: Numba's tutorial add_ufunc (numpy: repr(a + b), repr(b_col + c)).
local ADD_UFUNC = [=[
a + b:
array([11, 22, 33, 44])

b_col + c:
array([[10, 11, 12, 13],
       [24, 25, 26, 27],
       [38, 39, 40, 41],
       [52, 53, 54, 55]])
]=]
-- examples/elementwise.lua: CuPy's guide squared_diff (its printed results), then
-- dnnLayerNode on [[0, 1, 2], [3, 4, 5]] * [0.5, 1, 2] + 1 (numpy's repr of the same).
local SQUARED_DIFF = [=[
squared_diff(x, y):
array([[ 0.,  0.,  0.,  0.,  0.],
       [25., 25., 25., 25., 25.]], dtype=float32)
squared_diff(x, 5):
array([[25., 16.,  9.,  4.,  1.],
       [ 0.,  1.,  4.,  9., 16.]], dtype=float32)
squared_diff(x, y, z) wrote z:
array([[ 0.,  0.,  0.,  0.,  0.],
       [25., 25., 25., 25., 25.]], dtype=float32)
]=]
local DNN_LAYER_NODE = [=[
dnnLayerNode(x, w, 1) with x = [[0, 1, 2], [3, 4, 5]], w = [0.5, 1, 2]:
array([[ 1. ,  2. ,  5. ],
       [ 2.5,  5. , 11. ]], dtype=float32)
]=]
-- examples/reduction.lua: CuPy's guide l2norm (its printed result), then dnnLayer on
-- arange(10).reshape(2, 5) and arange(5) with bias 0.5 (numpy's repr of the same).
local L2NORM = [=[
l2norm(x, {axis = 2}):
array([ 5.477226 , 15.9687195], dtype=float32)
]=]
local DNN_LAYER = [=[
dnnLayer(x, w, 0.5) with x = [[0..4], [5..9]], w = [0..4]:
array(110.5, dtype=float32)
dnnLayer(x, w, 0.5, {axis = 2}):
array([30.5, 80.5], dtype=float32)
]=]
-- examples/fuse.lua: CuPy's guide squared_diff of arange(10) and its reverse.
local FUSE = [=[
squared_diff(x, x reversed):
array([81, 49, 25,  9,  1,  1,  9, 25, 49, 81])
sum of the squared differences: 330
row sums of squares of [[0, 1, 2], [3, 4, 5]]:
array([ 5, 50])
]=]

-- What quickstart prints on `device` ("cpu" or "cuda").
local function check_quickstart(out, device)
  contains(out, "array([[ 0.,  1.,  2.,  3.],\n       [ 4.,  5.,  6.,  7.],\n" ..
                "       [ 8.,  9., 10., 11.]], dtype=float32)\n")
  contains(out, "shape {3, 4}\tdtype float32\tsize 12\n")
  contains(out, "array([4., 5., 6., 7.], dtype=float32)\n")
  if device == "cuda" then
    contains(out, "device: <device cuda:0")
    contains(out, "y = a * x + y on cuda:0:\n")
  else
    contains(out, "device: <device cpu>\n")
    contains(out, "y = a * x + y on cpu:\n")
  end
  contains(out, "saxpy matches the host on all 4096 elements\n")
end

describe("examples", function()
  it("quickstart.lua runs on the default device, and says once on stderr when that is the cpu", function()
    local out, err, code = luda(example("quickstart.lua"))
    assert.are.same({ support.cpu_note(), 0 }, { err, code })
    check_quickstart(out, support.gpu_missing() and "cpu" or "cuda")
  end)

  on_devices("quickstart.lua runs its raw kernel where its arrays are", function(device)
    local out, err, code = luda(example("quickstart.lua"), device)
    assert.are.same({ "", 0 }, { err, code })
    check_quickstart(out, device)
  end)

  on_devices("raw_kernel.lua gives CuPy's RawKernel result with both launch shapes", function(device)
    local out, err, code = luda(example("raw_kernel.lua"), device)
    assert.are.same({"", 0}, {err, code})
    contains(out, TWICE_ARANGE .. "grid (10,) block (10,): y equals x1 + x2 computed on the host\n")
    contains(out, "grid (1,) block (100,): y equals x1 + x2 computed on the host\n")
  end)

  on_devices("raw_module.lua gives CuPy's RawModule results for test_sum and test_multiply", function(device)
    local out, err, code = luda(example("raw_module.lua"), device)
    assert.are.same({"", 0}, {err, code})
    contains(out, ARANGE_PLUS_ONE .. "test_sum: y = x1 + x2 matches the host\n")
    contains(out, ARANGE .. "test_multiply: y = x1 * x2 matches the host\n")
    contains(out, "test_sum on random x2 matches the host\n")
    contains(out, "test_multiply on random x2 matches the host\n")
  end)

  on_devices("sobel_graph.lua runs a batch as a graph of independent branches, equal to the eager run", function(device)
    local out, err, code = luda(example("sobel_graph.lua") .. " 4 40 50", device)
    assert.are.same({ "", 0 }, { err, code })
    contains(out, "sobel: 4 images of 40 x 50 on ")
    contains(out, "graph: 68 nodes, 64 edges, 4 independent branches\n")
    assert(out:find("\neager [%d.]+ ms, graph [%d.]+ ms %([%d.]+x%)\n"), out)
    contains(out, "the graph and eager results are equal, and the first image matches plain Lua\n")
  end)

  on_devices("chunked_add.lua adds y to x's rows block by block through a raw kernel, equal to x + y", function(device)
    local out, err, code = luda(example("chunked_add.lua"), device)
    assert.are.same({ "", 0 }, { err, code })
    contains(out, "chunked<shape=(4096, 1024), dtype=float32, chunksize=(1024, 512), numblocks=(4, 2), devices=")
    contains(out, "block (0, 1): shape (1024, 512), row stride 1024 elements\n")
    contains(out, "map_blocks(dispatch_add) equals x + y on all 4194304 elements\n")
  end)

  on_devices("chunked_svd.lua gives the one-array SVD's singular values from 4 chunks", function(device)
    local out, err, code = luda(example("chunked_svd.lua") .. " 2000 100 500", device)
    assert.are.same({ "", 0 }, { err, code })
    contains(out, "chunked<shape=(2000, 100), dtype=float64, chunksize=(500, 100), numblocks=(4, 1), devices=")
    assert(out:find("the chunked and one%-array values differ by [%d.e%-+]+ x the largest\n"), out)
    assert(out:find("U is orthonormal to [%d.e%-+]+\n"), out)
  end)

  on_devices("monte_carlo_pi.lua estimates pi as Numba's example does, thread 0 equal to plain Lua", function(device)
    local out, err, code = luda(example("monte_carlo_pi.lua") .. " 2000", device)
    assert.are.same({ "", 0 }, { err, code })
    assert(out:find("^pi: 3%.1%d+ %(3072000 points on "), out)
    contains(out, "thread 0 matches plain Lua; the estimate is within 0.01 of pi\n")
  end)

  on_devices("vectorize.lua gives Numba's add_ufunc results and matches plain Lua on a million elements", function(device)
    local out, err, code = luda(example("vectorize.lua"), device)
    assert.are.same({ "", 0 }, { err, code })
    contains(out, ADD_UFUNC)
    assert(out:find("\ngaussian_pdf%(x%[0%], 0%.0, 1%.0%) = [%d%.e%-]+ %(plain Lua: [%d%.e%-]+%)\n"), out)
    contains(out, "gaussian_pdf matches plain Lua on all 1000000 elements")
    contains(out, "polar_distance matches plain Lua on all 1000000 elements")
  end)

  on_devices("elementwise.lua gives CuPy's squared_diff and dnnLayerNode results", function(device)
    local out, err, code = luda(example("elementwise.lua"), device)
    assert.are.same({ "", 0 }, { err, code })
    contains(out, SQUARED_DIFF)
    contains(out, DNN_LAYER_NODE)
    contains(out, "dnnLayerNode matches plain Lua on all 1000000 elements")
  end)

  on_devices("reduction.lua gives CuPy's l2norm and dnnLayer results", function(device)
    local out, err, code = luda(example("reduction.lua"), device)
    assert.are.same({ "", 0 }, { err, code })
    contains(out, L2NORM)
    contains(out, DNN_LAYER)
    assert(out:find("\ndnnLayer over 1000000 float32 elements: [%d%.e%-]+, the float64 sum in plain Lua [%d%.e%-]+ %(difference"), out)
  end)

  on_devices("fuse.lua gives CuPy's fused squared_diff, its sum, and the layer", function(device)
    local out, err, code = luda(example("fuse.lua"), device)
    assert.are.same({ "", 0 }, { err, code })
    contains(out, FUSE)
    contains(out, "fused layer matches plain Lua on all 1000000 elements")
  end)

  -- On one process; ctest's example.distributed_sum runs it on 3 under mpirun.
  on_devices("distributed_sum.lua sums 0 .. N-1 and its squares as the closed formulas say, on one rank", function(device)
    local out, err, code = luda(example("distributed_sum.lua") .. " 1000000", device)
    assert.are.same({ "", 0 }, { err, code })
    contains(out, "1 rank, up to 1000000 values each, rank 0's on " .. support.device_name(device) .. "\n")
    contains(out, "sum of 0 .. 999999 = 499999500000 (N(N-1)/2 = 499999500000)\n")
    contains(out, "both equal the closed formulas\n")
  end)
end)
