-- luda.dist in a process that no MPI launcher started: one rank, whose collectives return
-- copies, and the errors of bad arguments; and the `luda` command started as if by mpirun
-- with no plugin to load. tests/lua/mpi/dist_spec.lua runs the collectives under mpirun.
local luda = require "luda"
local support = require "support"
local dist = luda.dist

local on_devices = support.device_tests(_ENV)
local error_of = support.error_of

local function launched() return os.getenv("OMPI_COMM_WORLD_SIZE") or os.getenv("PMI_SIZE") or os.getenv("PMIX_RANK") end

-- The message of an error raised by a luda function, without its "file:line: ".
local function message_of(f)
  return (tostring(error_of(f)):gsub("^[^:]*:%d+: ", ""))
end

describe("luda.dist without mpirun", function()
  if launched() then
    it("runs without an MPI launcher", function() pending("this process runs under an MPI launcher") end)
    return
  end

  it("is one rank, 0 of 1", function()
    assert.are.equal(0, dist.rank())
    assert.are.equal(1, dist.size())
    assert.are.equal("integer", math.type(dist.size()))
  end)

  it("has a barrier that returns at once", function()
    dist.barrier()
    dist.barrier({ timeout = 0.1 })
  end)

  on_devices("returns copies from the collectives", function(device)
    local x = luda.array({ { 1, 2, 3 }, { 4, 5, 6 } }, "int32")
    for _, op in ipairs({ "sum", "prod", "max", "min" }) do
      local y = dist.allreduce(x, op)
      assert.are.same(x:totable(), y:totable())
      assert.are.equal("int32", y.dtype)
      assert.are.equal(support.device_name(device), y.device)
    end
    local y = dist.allreduce(x)
    y:fill(0)
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, x:totable())  -- a copy, not x
    assert.are.same(x:totable(), dist.broadcast(x, 0):totable())
    local g = dist.allgather(x)
    assert.are.same({ 1, 2, 3 }, g.shape)
    assert.are.same({ x:totable() }, g:totable())
    assert.are.same({ 1 }, dist.allgather(luda.array(2.5)).shape)
    assert.are.same({ 1, 0 }, dist.allgather(luda.zeros(0)).shape)
    local t = x.T
    assert.are.same(t:totable(), dist.allreduce(t, "max"):totable())
    assert.are.same({ 3, 2 }, dist.allreduce(t).shape)
  end)

  it("takes the op and the options in any of their places", function()
    local x = luda.arange(3, nil, { device = "cpu" })
    assert.are.same({ 0, 1, 2 }, dist.allreduce(x, { timeout = 5 }):totable())
    assert.are.same({ 0, 1, 2 }, dist.allreduce(x, nil, { timeout = 5 }):totable())
    assert.are.same({ 0, 1, 2 }, dist.allreduce(x, "min", { timeout = 5 }):totable())
    assert.are.same({ { 0, 1, 2 } }, dist.allgather(x, { timeout = 5 }):totable())
    assert.are.same({ 0, 1, 2 }, dist.broadcast(x, 0, { timeout = 5 }):totable())
  end)

  it("names the function and the fix for bad arguments", function()
    local x = luda.arange(3, nil, { device = "cpu" })
    local z = luda.zeros(2, "complex128", { device = "cpu" })
    assert.are.equal("bad argument #2 to 'luda.dist.allreduce' (unknown op 'avg'; expected \"sum\", \"prod\", \"max\" or \"min\")",
      message_of(function() dist.allreduce(x, "avg") end))
    assert.are.equal("bad argument #2 to 'luda.dist.allreduce' (op must be \"sum\", \"prod\", \"max\" or \"min\", got 3)",
      message_of(function() dist.allreduce(x, 3) end))
    assert.are.equal("luda.dist.allreduce: max is not defined for complex128 (complex numbers have no order); use sum or prod, or reduce the real parts (luda.real(x))",
      message_of(function() dist.allreduce(z, "max") end))
    assert.are.equal("bad argument #1 to 'luda.dist.allreduce' (ndarray expected, got table)",
      message_of(function() dist.allreduce({ 1, 2 }) end))
    assert.are.equal("luda.dist.broadcast: root 1 is out of range: the job has 1 rank, 0 (run the script with mpirun -n N for more) (ranks count from 0)",
      message_of(function() dist.broadcast(x, 1) end))
    assert.are.equal("bad argument #2 to 'luda.dist.broadcast' (root (the rank whose array every rank gets, from 0) expected, got no value)",
      message_of(function() dist.broadcast(x) end))
    assert.are.equal("bad argument #2 to 'luda.dist.broadcast' (number has no integer representation)",
      message_of(function() dist.broadcast(x, 0.5) end))
    assert.are.equal("luda.dist.send: dest 0 is this rank; a message to itself would wait for its own recv: use x:copy() instead",
      message_of(function() dist.send(x, 0) end))
    assert.are.equal("luda.dist.recv: source 0 is this rank; a message to itself would wait for its own send: use x:copy() instead",
      message_of(function() dist.recv(x, 0) end))
    assert.are.equal("bad argument #2 to 'luda.dist.send' (dest (a rank, from 0) expected, got no value)",
      message_of(function() dist.send(x) end))
    assert.are.equal("bad argument #3 to 'luda.dist.send' (tag (an integer) expected, got 'a')",
      message_of(function() dist.send(x, 1, "a") end))
    assert.are.equal("bad argument #1 to 'luda.dist.barrier' (unknown option 'timout'; expected timeout)",
      message_of(function() dist.barrier({ timout = 1 }) end))
    assert.are.equal("bad argument #1 to 'luda.dist.barrier' (option 'timeout' must be a positive number of seconds, got 0)",
      message_of(function() dist.barrier({ timeout = 0 }) end))
    assert.are.equal("bad argument #3 to 'luda.dist.allreduce' (option 'timeout' must be a number of seconds, got 'soon')",
      message_of(function() dist.allreduce(x, "sum", { timeout = "soon" }) end))
  end)

  it("reads LUDA_DIST_TIMEOUT, and names it when it is not a number of seconds", function()
    local out, err, code = support.run_luda("-e 'luda.dist.barrier()'", nil, false, { LUDA_DIST_TIMEOUT = "ten" })
    assert.are.equal(1, code)
    assert.matches("LUDA_DIST_TIMEOUT='ten' is not a positive number of seconds; set it to one (the default is 60) or unset it",
      err, 1, true)
    out, err, code = support.run_luda("-e 'luda.dist.barrier(); print(luda.dist.size())'", nil, false,
      { LUDA_DIST_TIMEOUT = "0.5" })
    assert.are.equal("1\n", out)
    assert.are.equal(0, code)
  end)

  it("says what to install when mpirun starts luda and the plugin is missing", function()
    local out, err, code = support.run_luda("-e 'print(luda.dist.rank())'", nil, false, {
      OMPI_COMM_WORLD_SIZE = "2", LUDA_MPI_PLUGIN = "/nonexistent/libluda_mpi.so",
    })
    assert.are.equal("", out)
    assert.are.equal(1, code)
    assert.matches("luda.dist: this process runs under an MPI launcher (OMPI_COMM_WORLD_SIZE=2) and needs luda's MPI plugin: libluda_mpi.so not found; tried:\n"
      .. "  /nonexistent/libluda_mpi.so: no such file\n"
      .. "Install MPI's development files (Debian: apt-get install openmpi-bin libopenmpi-dev, as scripts/setup does) and build luda again",
      err, 1, true)
  end)

  it("says why cuda arrays would go through host memory when NCCL is turned off", function()
    local probe = "-e 'local i = luda.dist.info() print(i.rank, i.size, i.mpi, i.nccl, i.nccl_device) io.write(i.host_reason)'"
    local out, err, code = support.run_luda(probe, nil, false, { LUDA_NCCL = "off" })
    assert.are.equal(0, code, err)
    assert.are.equal("0\t1\tnil\tnil\tnil\nNCCL is turned off by LUDA_NCCL=off (unset it to use NCCL)", out)
  end)

  it("loads nothing when no dist function is called under mpirun", function()
    local out, err, code = support.run_luda("-e 'print(luda.arange(3):sum():item())'", nil, false, {
      OMPI_COMM_WORLD_SIZE = "2", LUDA_MPI_PLUGIN = "/nonexistent/libluda_mpi.so", LUDA_DEVICE = "cpu",
    })
    assert.are.equal("3\n", out)
    assert.are.equal(0, code)
  end)
end)
