// The builtin table's columns (dsl/builtins.h: barrier, warp, grid_barrier, atomic,
// fence, positive) are what code generation reads: each row is used in a small kernel,
// with arguments named after its args_doc, and what the emitted kernel needs is checked
// against the row's columns. A new row gets its behaviour from its columns, and fails
// here when its args_doc names an argument these tests cannot supply.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dsl/builtins.h"
#include "tests/dsl/test_environment.h"

namespace luda::dsl {
namespace {

using namespace luda::dsl::testing;

// The kernel's parameters: an array for atomics, an array of floats, an integer, and
// generator states for cuda.random (a uint64 array of shape {n, 2}).
const std::vector<Type> kParams = {arr(Scalar::UInt32), arr(Scalar::Float32), i32(), arr(Scalar::UInt64, 2)};

// An argument for each name that args_doc uses. `ints` picks integers for the operands
// that take either a float or an integer (the bit functions take only integers).
std::optional<std::string> sample(const std::string& param, bool ints) {
  static const std::map<std::string, std::string> fixed = {
      {"a", "a"},     {"i", "m"},    {"v", "1"},      {"old", "0"}, {"mask", "0xffffffff"}, {"pred", "m > 0"},
      {"lane", "1"},  {"base", "0"}, {"offset", "1"}, {"n", "1"},   {"shape", "4"},         {"dtype", "luda.float32"},
      {"re", "f[0]"}, {"im", "2"},   {"states", "s"},
  };
  if (auto it = fixed.find(param); it != fixed.end()) return it->second;
  if (param == "x" || param == "y" || param == "z" || param == "value") return ints ? "m" : "f[0]";
  return std::nullopt;
}

// The required parameters args_doc names: "(x [, base])" -> {x}, "([mask])" -> {}.
std::vector<std::string> params_of(std::string_view doc) {
  std::vector<std::string> out;
  std::string name;
  int optional = 0;
  for (char c : doc) {
    if (c == '[' || c == ',' || c == ')') {
      if (!name.empty() && name != "..." && optional == 0) out.push_back(name);
      name.clear();
      optional += c == '[';
    } else if (c == ']') {
      --optional;
    } else if (c != '(' && c != ' ') {
      name += c;
    }
  }
  return out;
}

// The arguments of a call of `row`, or nullopt when args_doc names one without a sample.
std::optional<std::string> arguments(const Builtin& row, bool ints) {
  std::string args;
  for (const std::string& p : params_of(row.args_doc)) {
    auto s = sample(p, ints);
    if (!s) return std::nullopt;
    args += (args.empty() ? "" : ", ") + *s;
  }
  return args;
}

// Statements that use `row` once, to try in turn (a call whose result is void can only
// be a statement), or an empty list when args_doc names an argument without a sample.
std::vector<std::string> uses(const Builtin& row, bool ints) {
  std::string name(row.name);
  if (row.form == Builtin::Form::Value) return {"local r = " + name};
  auto args = arguments(row, ints);
  if (!args) return {};
  if (row.form == Builtin::Form::Group) return {"local g = " + name + "()"};
  if (auto method = name.find("():"); method != std::string::npos)
    return {"local g = " + name.substr(0, method) + "()\n  g:" + name.substr(method + 3) + "(" + *args + ")"};
  std::string call = name + "(" + *args + ")";
  return {"local r = " + call, call};
}

// The kernel k(a, f, m) with `body`, compiled for the cpu target, or nullopt when it does
// not compile.
std::optional<CudaKernel> compile_body(const std::string& body) {
  try {
    TestChunk c("local function k(a, f, m, s)\n" + body + "end\n");
    return c.compile("k", kParams, {.target = Target::Cpu});
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// `body` with USE replaced by a use of `row`: the first use that compiles.
std::optional<CudaKernel> compile_use(const Builtin& row, const std::string& body) {
  for (bool ints : {false, true}) {
    for (const std::string& use : uses(row, ints)) {
      std::string text = body;
      text.replace(text.find("USE"), 3, use);
      if (auto k = compile_body(text)) return k;
    }
  }
  return std::nullopt;
}

bool interleaves(const Builtin& row) { return row.barrier || row.warp || row.grid_barrier; }
// Generator states (Atomic::State) belong to one thread each: nothing waits on them.
bool waits_through_memory(const Builtin& row) {
  return row.atomic == Builtin::Atomic::Indexed || row.atomic == Builtin::Atomic::First || row.fence;
}

TEST(BuiltinColumns, EveryRowCompilesWithTheArgumentsItsDocNames) {
  for (const Builtin& row : builtin_table()) {
    SCOPED_TRACE(std::string(row.name));
    EXPECT_FALSE(uses(row, false).empty())
        << row.args_doc << " names an argument without a sample: add it to sample() in this file";
    EXPECT_TRUE(compile_use(row, "  USE\n").has_value());
  }
}

// barrier, warp, grid_barrier: the cpu target runs the kernel's threads as fibers;
// grid_barrier also makes it cooperative. Every other row leaves a straight-line kernel
// running its threads one after another.
TEST(BuiltinColumns, BarriersAndWarpFunctionsMakeTheThreadsFibers) {
  int fibers = 0;
  for (const Builtin& row : builtin_table()) {
    SCOPED_TRACE(std::string(row.name));
    auto k = compile_use(row, "  USE\n");
    ASSERT_TRUE(k.has_value());
    EXPECT_EQ(k->needs_fibers, interleaves(row));
    EXPECT_EQ(k->cooperative, row.grid_barrier);
    EXPECT_EQ(k->code.find("_cpu_needs_fibers = 1;") != std::string::npos, interleaves(row));
    EXPECT_EQ(k->code.find("_cpu_cooperative = 1;") != std::string::npos, row.grid_barrier);
    fibers += interleaves(row);
  }
  EXPECT_GE(fibers, 3);  // syncthreads, syncwarp, g:sync() at least
}

// atomic, fence: threads may wait for one another through memory, so on the cpu target a
// kernel with an open loop yields at its back-edges (and so runs as fibers).
TEST(BuiltinColumns, AtomicsAndFencesMakeOpenLoopsYield) {
  int waiting = 0;
  for (const Builtin& row : builtin_table()) {
    SCOPED_TRACE(std::string(row.name));
    auto k = compile_use(row, "  USE\n  local c = m\n  while c < 0 do c = c + 1 end\n");
    ASSERT_TRUE(k.has_value());
    EXPECT_EQ(k->code.find("luda_yield();") != std::string::npos, waits_through_memory(row)) << k->code;
    EXPECT_EQ(k->needs_fibers, interleaves(row) || waits_through_memory(row));
    waiting += waits_through_memory(row);
  }
  EXPECT_GE(waiting, 4);  // cuda.atomic.add, cas, compare_and_swap, threadfence at least
}

// atomic: Indexed rows address a[i] with the index given (here the parameter m), First
// rows a[0] with none.
TEST(BuiltinColumns, AtomicsAddressTheElementTheirColumnNames) {
  for (const Builtin& row : builtin_table()) {
    if (row.atomic == Builtin::Atomic::None) continue;
    SCOPED_TRACE(std::string(row.name));
    auto k = compile_use(row, "  USE\n");
    ASSERT_TRUE(k.has_value());
    if (row.atomic == Builtin::Atomic::State) {  // both words of generator m
      EXPECT_NE(k->code.find("(&s.data[((long long)(m)) * s.strides[0] + 0LL * s.strides[1]], "
                             "&s.data[((long long)(m)) * s.strides[0] + 1LL * s.strides[1]])"),
                std::string::npos)
          << k->code;
      continue;
    }
    bool first = row.atomic == Builtin::Atomic::First;
    EXPECT_EQ(k->code.find("(&a.data[0LL"), first ? k->code.find("(&a.data[") : std::string::npos) << k->code;
    EXPECT_EQ(k->code.find("(&a.data[((long long)(m))"), first ? std::string::npos : k->code.find("(&a.data["))
        << k->code;
  }
}

// positive: a 'for' step that is a block or grid size needs no test against zero; any
// other value that is not a constant does (Lua raises "'for' step is zero"). Rows whose
// value cannot be a step (void, bool, tuples, arrays) must not be positive.
TEST(BuiltinColumns, PositiveSizesNeedNoZeroStepTest) {
  int positive = 0;
  for (const Builtin& row : builtin_table()) {
    SCOPED_TRACE(std::string(row.name));
    if (row.form == Builtin::Form::Group || row.name.find("():") != std::string_view::npos) continue;
    if (row.form == Builtin::Form::Value && row.type(row, {}).constant) continue;  // math.pi: a literal
    std::optional<CudaKernel> k;
    for (bool ints : {false, true}) {
      auto args = arguments(row, ints);
      if (!args) continue;
      std::string step = row.form == Builtin::Form::Value ? std::string(row.name)
                                                          : std::string(row.name) + "(" + *args + ")";
      if ((k = compile_body("  for j = 0, 10, " + step + " do f[0] = j end\n"))) break;
    }
    if (!k) {
      EXPECT_FALSE(row.positive) << "a positive row whose value the test cannot use as a 'for' step";
      continue;
    }
    EXPECT_EQ(k->code.find("luda_step_zero") == std::string::npos, row.positive) << k->code;
    positive += row.positive;
  }
  EXPECT_GE(positive, 7);  // blockDim.x/y/z, gridDim.x/y/z, gridsize
}

}  // namespace
}  // namespace luda::dsl
