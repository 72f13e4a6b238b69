// runtime/dist without an MPI launcher: one rank, whose collectives return copies; the
// argument errors; the deadline's sources; the messages for ranks that disagree; and the
// plugin's search and its errors. tests/lua/mpi/dist_spec.lua runs the collectives under
// mpirun.
#include "runtime/dist/dist.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/dist/call_record.h"
#include "runtime/dist/open_plugin.h"
#include "runtime/error.h"

namespace luda::dist {
namespace {

// Sets or unsets an environment variable for a scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

// These tests are about a process that no launcher started.
bool under_launcher() { return detail::launcher_variable().has_value(); }

NDArray iota(const Shape& shape, DType dtype) {
  NDArray a = NDArray::empty(shape, dtype, Device::cpu());
  for (std::int64_t i = 0; i < a.size(); ++i) {
    std::vector<std::int64_t> index(shape.size());
    std::int64_t rest = i;
    for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
      index[k] = rest % shape[k];
      rest /= shape[k];
    }
    a.set(index, Scalar::of_int(i + 1).cast(dtype));
  }
  return a;
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

std::vector<std::byte> bytes(const NDArray& a) { return a.to_host_bytes(); }

TEST(Dist, OneRankWithoutALauncher) {
  if (under_launcher()) GTEST_SKIP() << "run under an MPI launcher";
  EXPECT_EQ(rank(), 0);
  EXPECT_EQ(size(), 1);
  barrier();
  barrier({.timeout = 0.5});
}

TEST(Dist, CollectivesOfOneRankReturnCopies) {
  if (under_launcher()) GTEST_SKIP() << "run under an MPI launcher";
  NDArray x = iota({2, 3}, DType::Int32);
  for (Op op : {Op::Sum, Op::Prod, Op::Max, Op::Min}) {
    NDArray y = allreduce(x, op);
    EXPECT_NE(y.buffer(), x.buffer());
    EXPECT_EQ(y.shape(), x.shape());
    EXPECT_EQ(y.dtype(), DType::Int32);
    EXPECT_EQ(bytes(y), bytes(x));
  }
  NDArray b = broadcast(x, 0);
  EXPECT_NE(b.buffer(), x.buffer());
  EXPECT_EQ(bytes(b), bytes(x));
  NDArray g = allgather(x);
  EXPECT_EQ(g.shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(bytes(g), bytes(x));
  // A 0-d array gathers to shape (1,); a transposed one is copied in its own order.
  EXPECT_EQ(allgather(iota({}, DType::Float64)).shape(), (Shape{1}));
  NDArray t = x.transpose();
  EXPECT_EQ(bytes(allreduce(t, Op::Sum)), bytes(t.copy()));
  EXPECT_EQ(bytes(allgather(t)), bytes(t.copy()));
}

TEST(Dist, ArgumentErrorsNameTheFunctionAndTheFix) {
  if (under_launcher()) GTEST_SKIP() << "run under an MPI launcher";
  NDArray x = iota({3}, DType::Float32);
  EXPECT_EQ(error_of([&] { broadcast(x, 1); }),
            "luda.dist.broadcast: root 1 is out of range: the job has 1 rank, 0 (run the script with mpirun -n N "
            "for more) (ranks count from 0)");
  EXPECT_TRUE(starts_with(error_of([&] { broadcast(x, -1); }), "luda.dist.broadcast: root -1 is out of range: "));
  EXPECT_EQ(error_of([&] { send(x, 0); }),
            "luda.dist.send: dest 0 is this rank; a message to itself would wait for its own recv: use x:copy() "
            "instead");
  NDArray buf = iota({3}, DType::Float32);
  EXPECT_EQ(error_of([&] { recv(buf, 0); }),
            "luda.dist.recv: source 0 is this rank; a message to itself would wait for its own send: use x:copy() "
            "instead");
  EXPECT_TRUE(starts_with(error_of([&] { send(x, 2); }), "luda.dist.send: dest 2 is out of range: "));
  NDArray z = iota({2}, DType::Complex128);
  EXPECT_EQ(error_of([&] { allreduce(z, Op::Max); }),
            "luda.dist.allreduce: max is not defined for complex128 (complex numbers have no order); use sum or prod, "
            "or reduce the real parts (luda.real(x))");
  EXPECT_TRUE(starts_with(error_of([&] { allreduce(z.astype(DType::Complex64), Op::Min); }),
                          "luda.dist.allreduce: min is not defined for complex64 (complex numbers have no order)"));
  EXPECT_EQ(allreduce(z, Op::Prod).dtype(), DType::Complex128);
}

TEST(Dist, Ops) {
  EXPECT_EQ(parse_op("sum"), Op::Sum);
  EXPECT_EQ(parse_op("prod"), Op::Prod);
  EXPECT_EQ(parse_op("max"), Op::Max);
  EXPECT_EQ(parse_op("min"), Op::Min);
  EXPECT_EQ(parse_op("mean"), std::nullopt);
  EXPECT_EQ(parse_op("Sum"), std::nullopt);
  EXPECT_EQ(op_name(Op::Prod), "prod");
}

TEST(Dist, TimeoutFromTheCallThenTheEnvironmentThenSixtySeconds) {
  {
    ScopedEnv env("LUDA_DIST_TIMEOUT", nullptr);
    EXPECT_EQ(timeout_seconds({}), 60.0);
    EXPECT_EQ(timeout_seconds({.timeout = 2.5}), 2.5);
  }
  {
    ScopedEnv env("LUDA_DIST_TIMEOUT", "7.5");
    EXPECT_EQ(timeout_seconds({}), 7.5);
    EXPECT_EQ(timeout_seconds({.timeout = 2}), 2.0);
  }
  for (const char* bad : {"abc", "-1", "0", "5s", "nan"}) {
    ScopedEnv env("LUDA_DIST_TIMEOUT", bad);
    EXPECT_EQ(error_of([] { timeout_seconds({}); }),
              std::string("LUDA_DIST_TIMEOUT='") + bad +
                  "' is not a positive number of seconds; set it to one (the default is 60) or unset it");
  }
  EXPECT_EQ(error_of([] { timeout_seconds({.timeout = 0}); }),
            "luda.dist: timeout must be a positive number of seconds, got 0");
  EXPECT_EQ(error_of([] { timeout_seconds({.timeout = -3}); }),
            "luda.dist: timeout must be a positive number of seconds, got -3");
}

TEST(Dist, ABadTimeoutIsAnErrorWithOneRankToo) {
  if (under_launcher()) GTEST_SKIP() << "run under an MPI launcher";
  ScopedEnv env("LUDA_DIST_TIMEOUT", "soon");
  EXPECT_NE(error_of([] { barrier(); }).find("LUDA_DIST_TIMEOUT='soon'"), std::string::npos);
}

TEST(Dist, RankLists) {
  auto list = [](std::vector<int> r) { return detail::rank_list(r); };
  EXPECT_EQ(list({1}), "rank 1");
  EXPECT_EQ(list({0, 2}), "ranks 0 and 2");
  EXPECT_EQ(list({0, 1}), "ranks 0 and 1");
  EXPECT_EQ(list({5, 0, 2}), "ranks 0, 2 and 5");
  EXPECT_EQ(list({0, 1, 2, 3, 4, 7}), "ranks 0 to 4 and 7");
  EXPECT_EQ(list({0, 1, 2, 4, 5, 6, 9, 10}), "ranks 0 to 2, 4 to 6, 9 and 10");
}

using detail::Call;
using detail::CallRecord;
using detail::record_of;

TEST(Dist, RecordsThatAgreeGiveNoMessage) {
  NDArray x = iota({4, 2}, DType::Float64);
  std::vector<CallRecord> r(3, record_of(Call::Allreduce, &x, Op::Max));
  EXPECT_EQ(detail::mismatch_message("luda.dist.allreduce", r), "");
  std::vector<CallRecord> b(2, record_of(Call::Barrier, nullptr));
  EXPECT_EQ(detail::mismatch_message("luda.dist.barrier", b), "");
  EXPECT_EQ(detail::mismatch_message("luda.dist.barrier", {}), "");
}

TEST(Dist, MismatchMessagesNameEachRanksPart) {
  NDArray f64 = iota({4}, DType::Float64), f32 = iota({4}, DType::Float32), f64b = iota({2, 2}, DType::Float64);
  // Another call comes first.
  std::vector<CallRecord> calls = {record_of(Call::Allreduce, &f64), record_of(Call::Allreduce, &f32),
                                   record_of(Call::Barrier, nullptr)};
  EXPECT_EQ(detail::mismatch_message("luda.dist.barrier", calls),
            "luda.dist.barrier: the ranks made different calls: ranks 0 and 1 called luda.dist.allreduce, rank 2 "
            "called luda.dist.barrier; every rank must make the same luda.dist calls in the same order");
  // Then the op or the root.
  std::vector<CallRecord> ops = {record_of(Call::Allreduce, &f64, Op::Max), record_of(Call::Allreduce, &f32),
                                 record_of(Call::Allreduce, &f64)};
  EXPECT_EQ(detail::mismatch_message("luda.dist.allreduce", ops),
            "luda.dist.allreduce: the ranks asked for different operations: rank 0 asked for max, ranks 1 and 2 "
            "asked for sum; every rank must pass the same op");
  std::vector<CallRecord> roots = {record_of(Call::Broadcast, &f64, Op::Sum, 0),
                                   record_of(Call::Broadcast, &f64, Op::Sum, 0),
                                   record_of(Call::Broadcast, &f64, Op::Sum, 2)};
  EXPECT_EQ(detail::mismatch_message("luda.dist.broadcast", roots),
            "luda.dist.broadcast: the ranks named different roots: ranks 0 and 1 named root 0, rank 2 named root 2; "
            "every rank must pass the same root");
  // Then the arrays.
  std::vector<CallRecord> arrays = {record_of(Call::Allgather, &f64), record_of(Call::Allgather, &f32),
                                    record_of(Call::Allgather, &f64), record_of(Call::Allgather, &f64b)};
  EXPECT_EQ(detail::mismatch_message("luda.dist.allgather", arrays),
            "luda.dist.allgather: the ranks' arrays differ: ranks 0 and 2 gave float64 (4,), rank 1 gave float32 "
            "(4,), rank 3 gave float64 (2, 2); every rank must pass an array of the same dtype and shape");
  NDArray scalar = iota({}, DType::Int64);
  std::vector<CallRecord> zero_d = {record_of(Call::Allreduce, &scalar), record_of(Call::Allreduce, &f64)};
  EXPECT_EQ(detail::mismatch_message("luda.dist.allreduce", zero_d),
            "luda.dist.allreduce: the ranks' arrays differ: rank 0 gave int64 (), rank 1 gave float64 (4,); every "
            "rank must pass an array of the same dtype and shape");
}

TEST(Dist, MismatchMessagesOfManyRanksStayShort) {
  std::vector<NDArray> arrays;
  std::vector<CallRecord> records;
  for (int r = 0; r < 100; ++r) arrays.push_back(iota({r % 10 + 1}, DType::Int32));
  for (const NDArray& a : arrays) records.push_back(record_of(Call::Allgather, &a));
  EXPECT_EQ(detail::mismatch_message("luda.dist.allgather", records),
            "luda.dist.allgather: the ranks' arrays differ: ranks 0, 10, 20, 30, 40, 50, 60, 70, 80 and 90 gave int32 "
            "(1,), ranks 1, 11, 21, 31, 41, 51, 61, 71, 81 and 91 gave int32 (2,), ranks 2, 12, 22, 32, 42, 52, 62, "
            "72, 82 and 92 gave int32 (3,), ranks 3, 13, 23, 33, 43, 53, 63, 73, 83 and 93 gave int32 (4,), ranks 4, "
            "14, 24, 34, 44, 54, 64, 74, 84 and 94 gave int32 (5,), ranks 5 to 9, 15 to 19, 25 to 29, 35 to 39, 45 to "
            "49, 55 to 59, 65 to 69, 75 to 79, 85 to 89 and 95 to 99 gave others; every rank must pass an array of "
            "the same dtype and shape");
}

TEST(Dist, PluginCandidates) {
  {
    ScopedEnv env("LUDA_MPI_PLUGIN", "/opt/mpi/libluda_mpi.so");
    EXPECT_EQ(detail::plugin_candidates("/x/lib"), std::vector<std::string>{"/opt/mpi/libluda_mpi.so"});
  }
  ScopedEnv env("LUDA_MPI_PLUGIN", nullptr);
  std::vector<std::string> c = detail::plugin_candidates("/x/build");
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c.front(), "/x/build/libluda_mpi.so");
  EXPECT_EQ(c.back(), "libluda_mpi.so");
  EXPECT_EQ(detail::plugin_candidates(""), std::vector<std::string>{"libluda_mpi.so"});
}

TEST(Dist, LauncherVariables) {
  ScopedEnv a("OMPI_COMM_WORLD_SIZE", nullptr), b("PMI_SIZE", nullptr), c("PMIX_RANK", nullptr);
  EXPECT_EQ(detail::launcher_variable(), std::nullopt);
  {
    ScopedEnv pmix("PMIX_RANK", "2");
    EXPECT_EQ(detail::launcher_variable(), "PMIX_RANK=2");
    ScopedEnv ompi("OMPI_COMM_WORLD_SIZE", "4");
    EXPECT_EQ(detail::launcher_variable(), "OMPI_COMM_WORLD_SIZE=4");
  }
  ScopedEnv pmi("PMI_SIZE", "8");
  EXPECT_EQ(detail::launcher_variable(), "PMI_SIZE=8");
}

TEST(Dist, AMissingPluginNamesWhatToInstall) {
  std::string message = error_of([] {
    detail::open_plugin({"/nonexistent/libluda_mpi.so", "libc.so.6"}, "OMPI_COMM_WORLD_SIZE=3");
  });
  EXPECT_EQ(message,
            "luda.dist: this process runs under an MPI launcher (OMPI_COMM_WORLD_SIZE=3) and needs luda's MPI plugin: "
            "libluda_mpi.so not found; tried:\n"
            "  /nonexistent/libluda_mpi.so: no such file\n"
            "  libc.so.6: not libluda_mpi.so (it has no luda_mpi_plugin_table)\n"
            "Install MPI's development files (Debian: apt-get install openmpi-bin libopenmpi-dev, as scripts/setup "
            "does) and build luda again: CMake builds libluda_mpi.so beside libluda when it finds MPI, and `cmake "
            "--install` installs it; or set LUDA_MPI_PLUGIN to the plugin's path.");
}

TEST(Dist, ThePluginOfThisBuildLoads) {
  const std::string path = LUDA_BINARY_DIR "/libluda_mpi.so";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no MPI plugin in this build (CMake found no MPI)";
  const luda_mpi_plugin& p = detail::open_plugin({path}, "PMIX_RANK=0");
  EXPECT_EQ(p.version, LUDA_MPI_PLUGIN_VERSION);
  EXPECT_GE(p.size, sizeof(luda_mpi_plugin));
  char text[128];
  p.error_string(LUDA_MPI_ERR_OP, text, sizeof text);
  EXPECT_STREQ(text, "the reduction is not defined for this dtype");
  // An operation before init is refused, not run.
  luda_mpi_request* r = nullptr;
  EXPECT_EQ(p.ibarrier(&r), LUDA_MPI_ERR_NOT_INITIALIZED);
  EXPECT_EQ(r, nullptr);
}

}  // namespace
}  // namespace luda::dist
