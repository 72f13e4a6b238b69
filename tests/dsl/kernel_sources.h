// Lua kernel sources that several test files compile: keep one copy of each.
#pragma once

namespace luda::dsl::testing {

// One kernel touching every builtin family and operator (compiled, not run: the
// families.lua chunk). Parameters: x (float array), n (int array), u (uint32 array), out.
inline constexpr const char* kEveryBuiltinFamily = R"(
local function families(x, n, u, out)
  local i = cuda.grid(1)
  local j, k = cuda.grid(2)
  local gx, gy, gz = cuda.gridsize(3)
  local t = cuda.local_array({2, 2}, luda.float32)
  local s = cuda.shared.array(64, "int32")
  local dyn = cuda.shared.dynamic("float32")
  t[1][1] = math.pi + math.huge * 0 + j + k + gx + gy + gz + dyn[0]
  s[cuda.threadIdx.x % 64] = cuda.laneid + cuda.warpsize + cuda.blockDim.y + cuda.gridDim.z
  cuda.syncthreads(); cuda.syncwarp(); cuda.syncwarp(0xffff); cuda.threadfence()
  cuda.threadfence_block(); cuda.threadfence_system()
  local c = cuda.syncthreads_count(i > 3)
  if cuda.syncthreads_and(i > 1) or cuda.syncthreads_or(i > 2) then c = c + 1 end
  local v = x[i % #x]
  local f = math.sqrt(v) + math.exp(v) + math.log(v) + math.log(v, 2) + math.sin(v) + math.cos(v)
  f = f + math.tan(v) + math.asin(v) + math.acos(v) + math.atan(v) + math.atan(v, 2) + math.abs(v)
  f = f + math.min(v, 1) + math.max(v, 2, 3) + math.fmod(v, 3) + math.floor(v) + math.ceil(v)
  f = f + luda.math.exp2(v) + luda.math.log2(v) + luda.math.log10(v) + luda.math.log1p(v) + luda.math.expm1(v)
  f = f + luda.math.sinh(v) + luda.math.cosh(v) + luda.math.tanh(v) + luda.math.erf(v) + luda.math.erfc(v)
  f = f + luda.math.lgamma(v) + luda.math.tgamma(v) + luda.math.cbrt(v) + luda.math.rsqrt(v)
  f = f + luda.math.round(v) + luda.math.trunc(v) + luda.math.hypot(v, 1) + luda.math.copysign(v, -1)
  f = f + math.deg(v) + math.rad(v) + luda.math.asinh(v) + luda.math.acosh(v) + luda.math.atanh(v)
  f = f + luda.math.nextafter(v, 1)
  f = f + luda.math.fma(v, v, v) + v // 2 + v % 3 + v ^ 2.5 + -v + 0 / 0 + 1 / 0
  if luda.math.isnan(f) or luda.math.isinf(f) or not luda.math.isfinite(f) then f = 0 end
  local m = n[0]
  m = (m // 3) + (m % 5) + (m << 2) + (m >> 1) + (m & 7) + (m | 8) + (m ~ 9) + ~m + math.abs(m) + math.fmod(m, 3)
  m = m + math.min(m, 4) + math.max(m, 5) + luda.int32(f) + n.size + n.ndim + n.shape[1]
  m = m + cuda.atomic.add(n, 0, 1) + cuda.atomic.sub(n, 0, 1) + cuda.atomic.min(n, 0, 1) + cuda.atomic.max(n, 0, 1)
  m = m + cuda.atomic.exch(n, 0, 1) + cuda.atomic.cas(n, 0, 1, 2) + cuda.atomic.and_(n, 0, 1)
  m = m + cuda.atomic.or_(n, 0, 1) + cuda.atomic.xor(n, 0, 1)
  m = m + cuda.atomic.nanmax(n, 0, 1) + cuda.atomic.nanmin(n, 0, 1) + cuda.atomic.compare_and_swap(n, 1, 2)
  v = v + cuda.atomic.nanmax(x, i, v) + cuda.atomic.nanmin(x, i, v) + cuda.atomic.compare_and_swap(x, v, 1)
  local w = cuda.atomic.inc(u, 0, 10) + cuda.atomic.dec(u, 0, 10) + cuda.ballot_sync(0xffffffff, m > 0)
  local bits = cuda.popc(luda.int8(m)) + cuda.clz(luda.uint16(m)) + cuda.ffs(luda.int64(m)) + cuda.popc(m)
  bits = bits + cuda.clz(m) + luda.int64(cuda.brev(luda.int64(m))) + cuda.brev(u[0]) + cuda.ffs(u[0])
  local same, all = cuda.match_all_sync(cuda.activemask(), v)
  if all then bits = bits + same + cuda.match_any_sync(cuda.lanemask_lt() | 1, m) end
  if cuda.all_sync(0xffffffff, m > 0) or cuda.any_sync(0xffffffff, w > 0) then
    f = f + cuda.shfl_sync(0xffffffff, f, 0) + cuda.shfl_up_sync(0xffffffff, f, 1)
    f = f + cuda.shfl_down_sync(0xffffffff, f, 1) + cuda.shfl_xor_sync(0xffffffff, f, 1)
  end
  local a, b = 1, 2
  a, b = b, a
  while a < 10 do a = a + 1; if a == 5 then break end end
  repeat local r = a; a = a - 1 until r < 3
  for q = 1.0, 2.0, 0.5 do f = f + q end
  out[i] = f + m + w + bits + c + t[1][1] + s[0] + cuda.atomic.max(x, i, v) + cuda.atomic.min(x, i, v)
  print("i =", i, "f =", f, m > 0, "100%")
end)";

// float16 / bfloat16 (h, with an int8 and a float32 array beside it) and complex (z, with
// its real type r): every operator, conversion and function the kernel language gives
// them, in one kernel each.
inline constexpr const char* kHalfFamilies = R"(
local function halves(h, i8, f, out, flags)
  local i = cuda.grid(1)
  local a, b = h[i], h[(i + 1) % #h]
  local c = a + b - a * b / (b + 1.5) + -a + a ^ 2 + a ^ b + a // b + a % b
  c = c + 0.25 + luda.float16(1) * 2 + i8[i] + luda.float16(f[i]) + luda.math.floor(a) + math.abs(a)
  c = c + math.sqrt(math.abs(a)) + math.exp(a) + math.log(math.abs(b) + 1) + math.sin(a) + math.atan(a, b)
  c = c + math.min(a, b) + math.max(a, b, c) + math.fmod(a, b) + luda.math.rint(a) + luda.math.hypot(a, b)
  c = c + luda.real(a) + luda.imag(a) + luda.conj(a) + luda.angle(a) + a.real + a.imag + math.floor(a)
  local bits = luda.int32(a) + luda.uint8(b) + luda.int64(c)
  for q = a, b, 0.5 do c = c + q end
  for k = 1, a do c = c + k end
  local s = cuda.shared.array(32, "float16")
  local l = cuda.local_array(4, luda.bfloat16)
  s[i % 32] = a
  l[0] = luda.bfloat16(c)
  out[i] = c + s[0] + l[0] + bits
  flags[i] = a < b and a <= b and a > b and a >= b and a == b and a ~= b and luda.math.isnan(a)
  print("h =", a, c)
end)";

inline constexpr const char* kComplexFamilies = R"(
local function complexes(z, r, out, re, flags)
  local i = cuda.grid(1)
  local a, b = z[i], z[(i + 1) % #z]
  local c = a + b - a * b / (b + 1.5) + -a + a ^ 2 + a ^ b + a ^ r[i] + luda.complex(0, 1) * a + 2 * a
  c = c + math.sqrt(a) + math.exp(a) + math.log(a) + math.log(a, b) + math.sin(a) + math.cos(a) + math.tan(a)
  c = c + math.asin(a) + math.acos(a) + math.atan(a) + luda.math.sinh(a) + luda.math.cosh(a) + luda.math.tanh(a)
  c = c + luda.math.asinh(a) + luda.math.acosh(a) + luda.math.atanh(a) + luda.math.log10(a) + luda.math.log2(a)
  c = c + luda.math.exp2(a) + luda.math.expm1(a) + luda.math.log1p(a) + math.min(a, b) + math.max(a, b)
  c = c + luda.complex64(r[i], 2) + luda.complex128(r[i]) + luda.conj(a) + luda.complex(r[i], r[i])
  local m = math.abs(a) + luda.real(a) + luda.imag(b) + luda.angle(a) + a.real + b.imag
  local t = cuda.local_array(4, "complex128")
  t[0] = c
  out[i] = t[0] + m
  re[i] = luda.float32(c) + luda.float16(a) + luda.int32(a) + r[i]
  if a < b or a <= b or a > b or a >= b or a == b or a ~= b or luda.math.isnan(a) or luda.math.isinf(b) or
     luda.math.isfinite(c) then re[i] = 0 end
  flags[i] = c
  print("z =", a, m)
end)";

}  // namespace luda::dsl::testing
