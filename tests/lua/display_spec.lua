-- luda.display.image outside a notebook: a PNG file of the picture (its pixels are checked
-- in tests/ops/image_test.cpp), named by file= or image<N>.png, and a line saying where;
-- its errors at the caller's line. (In a notebook: tests/kernel_client.py.)
local luda = require "luda"
local support = require "support"

local here, error_of = support.here, support.error_of

-- The width and height a PNG file's header gives, or nil when it is not a PNG.
local function png_size(path)
  local f = assert(io.open(path, "rb"))
  local head = f:read(24)
  f:close()
  if not head or head:sub(1, 8) ~= "\137PNG\r\n\26\n" or head:sub(13, 16) ~= "IHDR" then return nil end
  local width, height = string.unpack(">I4I4", head, 17)
  return width, height
end

describe("luda.display.image", function()
  it("writes a PNG of the array's width and height to file=, and says where", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert.is_true(os.execute("mkdir -p " .. support.quote(dir)))
    local path = dir .. "/picture.png"
    local x = luda.random.random({ 30, 40 }, "float32")
    assert.are.equal(path, luda.display.image(x, { file = path, cmap = "gray", vmin = 0, vmax = 1 }))
    assert.are.same({ 40, 30 }, { png_size(path) })
    local rgb = (luda.random.random({ 8, 6, 3 }) * 255):astype("uint8")
    assert.are.equal(dir .. "/rgb.png", luda.display.image(rgb, { file = dir .. "/rgb.png" }))
    assert.are.same({ 6, 8 }, { png_size(dir .. "/rgb.png") })
    -- Without file=: image1.png, image2.png, ... in the current folder, from the command.
    local out = support.run_luda("-e " .. support.quote(
      "luda.display.image(luda.arange(6.0):reshape(2, 3)) luda.display.image(luda.eye(4))"), "", false,
      { LUDA_DEVICE = "cpu" }, nil, dir)
    assert.are.equal("luda.display.image: wrote image1.png (<image 3 x 2>)\nluda.display.image: wrote image2.png (<image 4 x 4>)\n", out)
    assert.are.same({ 3, 2 }, { png_size(dir .. "/image1.png") })
    os.execute("rm -rf " .. support.quote(dir))
  end)

  it("draws plots with gnuplot and graphs with Graphviz, as SVG files", function()
    -- scripts/setup installs both; a machine without them (a GPU machine given a carried
    -- build) skips this.
    if not (os.execute("command -v gnuplot >/dev/null 2>&1") and os.execute("command -v dot >/dev/null 2>&1")) then
      pending("gnuplot or Graphviz's dot is not installed")
      return
    end
    local dir = os.tmpname()
    os.remove(dir)
    assert.is_true(os.execute("mkdir -p " .. support.quote(dir)))
    local x = luda.linspace(-4, 4, 50)
    local y = luda.exp(-x * x / 2)
    local path = luda.display.plot(x, y, { title = "density", xlabel = "x", file = dir .. "/p.svg", width = 320, height = 200 })
    local svg = support.read_file(path)
    assert.matches('viewBox="0 0 320 200"', svg)
    assert.matches("density", svg)
    local scatter = support.read_file(luda.display.plot(y:astype("float32"), { kind = "scatter", file = dir .. "/s.svg" }))
    -- gnuplot's points: one mark per point (a <use> of its point symbol)
    local _, marks = scatter:gsub("<use xlink:href='#gpPt6'", "")
    assert.are.equal(50, marks)
    local g = luda.graph(function(a) return a * 2 + 1 end, luda.zeros(4))
    local drawing = support.read_file(luda.display.graph(g, { file = dir .. "/g.svg" }))
    assert.matches("<svg", drawing)
    local _, nodes = drawing:gsub('class="node"', "")
    assert.are.equal(#g:nodes(), nodes)
    os.execute("rm -rf " .. support.quote(dir))
  end)

  it("refuses what has no picture, at the caller's line", function()
    assert.are.equal(here() .. "image: give a 2-d array, or a 3-d one of 3 or 4 channels (RGB, RGBA); got shape (5,)", error_of(function() luda.display.image(luda.zeros(5)) end))
    assert.are.equal(here() .. "image: unknown colormap 'jet'; give viridis or gray", error_of(function() luda.display.image(luda.zeros({ 2, 2 }), { cmap = "jet" }) end))
    assert.are.equal(here() .. "bad argument #2 to 'image' (unknown option 'cmp'; expected cmap, vmin, vmax, file)", error_of(function() luda.display.image(luda.zeros({ 2, 2 }), { cmp = "gray" }) end))
    assert.are.equal(here() .. "image: option 'vmin' must be a number, got 'low'", error_of(function() luda.display.image(luda.zeros({ 2, 2 }), { vmin = "low" }) end))
    assert.are.equal(here() .. "plot: y must be 1-d, got shape (2, 3)", error_of(function() luda.display.plot(luda.zeros({ 2, 3 })) end))
    assert.are.equal(here() .. "plot: x has 4 values and y 5", error_of(function() luda.display.plot(luda.zeros(4), luda.zeros(5)) end))
    assert.are.equal(here() .. "plot: kind is 'line' or 'scatter', got 'bar'", error_of(function() luda.display.plot(luda.zeros(4), { kind = "bar" }) end))
    assert.are.equal(here() .. "graph: give a recorded graph (luda.graph), got 42", error_of(function() luda.display.graph(42) end))
    local _, err = support.run_luda("-e " .. support.quote("luda.display.plot(luda.zeros(3))"), "", false,
      { LUDA_DEVICE = "cpu", LUDA_GNUPLOT = "/no/such/gnuplot" })
    assert.are.equal("luda: (command line 1):1: plot: gnuplot is not installed (apt-get install gnuplot-nox), or name it in LUDA_GNUPLOT", err:match("^[^\n]*"))
  end)
end)
