// Golden tests: the CUDA C++ (prelude left out) that small kernels become, kept in
// tests/dsl/golden/<name>.cu. A change in emission shows up here as a diff; after
// checking it, rewrite the files with LUDA_UPDATE_GOLDEN=1.
#include <gtest/gtest.h>

#include "dsl/codegen_cuda.h"
#include "tests/dsl/test_environment.h"
#include "tests/golden.h"

namespace luda::dsl {
namespace {

using namespace luda::dsl::testing;

constexpr const char* kSource = R"(
local function add_kernel(x, y, out)
  local start, stride = cuda.grid(1), cuda.gridsize(1)
  for i = start, #x - 1, stride do
    out[i] = x[i] + y[i]
  end
end

local function polar_distance(rho1, theta1, rho2, theta2)
  local x1, y1 = rho1 * math.cos(theta1), rho1 * math.sin(theta1)
  local x2, y2 = rho2 * math.cos(theta2), rho2 * math.sin(theta2)
  return math.sqrt((x1 - x2)^2 + (y1 - y2)^2), math.atan(y1 - y2, x1 - x2)
end

local function polar(rho1, theta1, rho2, theta2, dist, angle)
  local i = cuda.grid(1)
  if i < #rho1 then
    dist[i], angle[i] = polar_distance(rho1[i], theta1[i], rho2[i], theta2[i])
  end
end

local function transpose_tiled(a, out)
  local tile = cuda.shared.array({TILE, TILE + 1}, "int32")
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
end

local function lua_arith(a, b, out)
  local i = cuda.grid(1)
  local n = 0
  repeat
    out[i] = a[i] // b[i] + a[i] % b[i] - (a[i] >> 2)
    n = n + 1
  until n >= 3
  for j = 10, 1, -3 do out[i] = out[i] + j end
end
)";

void check_golden(const std::string& name, const std::string& code) {
  test_support::check_golden("tests/dsl/golden", name, code);
}

std::string emitted(const std::string& name, std::vector<Type> args, KernelOptions options = {}) {
  TestChunk c(kSource, "golden.lua");
  c.env.values["TILE"] = TestEnvironment::integer(32);
  return emit_cuda_functions(c.infer(name, std::move(args), options), options);
}

TEST(Golden, AddKernel) {
  check_golden("add_kernel", emitted("add_kernel", std::vector<Type>(3, arr(Scalar::Float32, 1, true))));
}

TEST(Golden, PolarDistanceTuple) {
  check_golden("polar", emitted("polar", std::vector<Type>(6, arr(Scalar::Float32))));
}

TEST(Golden, TransposeTiledBoundscheck) {
  check_golden("transpose_tiled",
               emitted("transpose_tiled", {arr(Scalar::Int32, 2), arr(Scalar::Int32, 2)}, {.boundscheck = true}));
}

TEST(Golden, LuaArithmetic) {
  check_golden("lua_arith", emitted("lua_arith", std::vector<Type>(3, arr(Scalar::Int32))));
}

}  // namespace
}  // namespace luda::dsl
