// runtime/dist under mpirun (tests/CMakeLists.txt runs this binary on 3 ranks; every rank
// runs every test, in order): transfers split into pieces, with the piece size set small
// (a real piece is 1 GiB), and the plugin's entry points called directly.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/dist/dist.h"
#include "runtime/dist/host_transfers.h"
#include "runtime/dist/open_plugin.h"
#include "runtime/error.h"

namespace luda::dist {
namespace {

// An array of `shape` whose element i is value(i).
template <class T, class F>
NDArray filled(const Shape& shape, F value) {
  NDArray a = NDArray::empty(shape, dtype_of<T>(), Device::cpu());
  auto* p = static_cast<T*>(a.data());
  for (std::int64_t i = 0; i < a.size(); ++i) p[i] = static_cast<T>(value(i));
  return a;
}

template <class T>
std::vector<T> elements(const NDArray& a) {
  NDArray c = a.copy(Device::cpu());
  const T* p = static_cast<const T*>(c.data());
  return std::vector<T>(p, p + c.size());
}

class Pieces : public ::testing::Test {
 protected:
  void SetUp() override {
    if (size() != 3) GTEST_SKIP() << "run under mpirun -n 3";
  }
  void TearDown() override { detail::set_piece_bytes(std::size_t{1} << 30); }
};

TEST_F(Pieces, Allreduce) {
  detail::set_piece_bytes(24);  // 3 int64 elements a piece, 101 elements
  const int r = rank();
  NDArray x = filled<std::int64_t>({101}, [&](std::int64_t i) { return i + r; });
  std::vector<std::int64_t> got = elements<std::int64_t>(allreduce(x, Op::Sum));
  for (std::int64_t i = 0; i < 101; ++i) ASSERT_EQ(got[i], 3 * i + 3) << i;
  std::vector<std::int64_t> top = elements<std::int64_t>(allreduce(x, Op::Max));
  for (std::int64_t i = 0; i < 101; ++i) ASSERT_EQ(top[i], i + 2) << i;
}

TEST_F(Pieces, AllreduceOfFloat16) {
  detail::set_piece_bytes(16);  // 4 float32 elements a piece, on the wire
  const int r = rank();
  NDArray x = filled<float>({9, 2}, [&](std::int64_t i) {
                return 0.5f * static_cast<float>(i) + r;
              }).astype(DType::Float16);
  NDArray y = allreduce(x, Op::Sum);
  EXPECT_EQ(y.dtype(), DType::Float16);
  std::vector<float> got = elements<float>(y.astype(DType::Float32));
  for (std::int64_t i = 0; i < 18; ++i) ASSERT_EQ(got[i], 1.5f * static_cast<float>(i) + 3) << i;
}

TEST_F(Pieces, Broadcast) {
  detail::set_piece_bytes(16);
  const int r = rank();
  NDArray x = filled<float>({37}, [&](std::int64_t i) { return static_cast<float>(i * 10 + r); });
  std::vector<float> got = elements<float>(broadcast(x, 1));
  for (std::int64_t i = 0; i < 37; ++i) ASSERT_EQ(got[i], static_cast<float>(i * 10 + 1)) << i;
}

TEST_F(Pieces, Allgather) {
  detail::set_piece_bytes(40);  // 70 bytes a rank: a piece of 40, then one of 30
  const int r = rank();
  NDArray x = filled<std::int16_t>({5, 7}, [&](std::int64_t i) { return i + 100 * r; });
  NDArray g = allgather(x);
  EXPECT_EQ(g.shape(), (Shape{3, 5, 7}));
  std::vector<std::int16_t> got = elements<std::int16_t>(g);
  for (std::int64_t k = 0; k < 3; ++k)
    for (std::int64_t i = 0; i < 35; ++i) ASSERT_EQ(got[k * 35 + i], i + 100 * k) << k << " " << i;
}

TEST_F(Pieces, SendAndRecvAroundARing) {
  detail::set_piece_bytes(16);
  const int r = rank(), next = (r + 1) % 3, prev = (r + 2) % 3;
  NDArray mine = filled<double>({50}, [&](std::int64_t i) { return i * 0.25 + r; });
  NDArray buf = NDArray::zeros({10, 5}, DType::Float64, Device::cpu()).transpose();  // strided
  NDArray into = NDArray::zeros({50}, DType::Float64, Device::cpu());
  if (r % 2 == 0) {
    send(mine, next, 3);
    recv(into, prev, 3);
  } else {
    recv(into, prev, 3);
    send(mine, next, 3);
  }
  std::vector<double> got = elements<double>(into);
  for (std::int64_t i = 0; i < 50; ++i) ASSERT_EQ(got[i], i * 0.25 + prev) << i;
  // The same into a strided buffer of another shape's worth: (5, 10) of a transposed array.
  NDArray shaped = mine.reshape({5, 10});
  if (r % 2 == 0) {
    send(shaped, next, 4);
    recv(buf, prev, 4);
  } else {
    recv(buf, prev, 4);
    send(shaped, next, 4);
  }
  std::vector<double> strided = elements<double>(buf);
  for (std::int64_t i = 0; i < 50; ++i) ASSERT_EQ(strided[i], i * 0.25 + prev) << i;
}

TEST(Plugin, EntryPointsCalledDirectly) {
  if (size() != 3) GTEST_SKIP() << "run under mpirun -n 3";
  // The plugin dist loaded (the same library, so the same initialized communicator).
  const luda_mpi_plugin& p = detail::open_plugin(detail::plugin_candidates(""), "mpirun");
  luda_mpi_request* r = nullptr;
  ASSERT_EQ(p.ibarrier(&r), 0);
  int done = 0;
  for (int i = 0; i < 100000 && !done; ++i) {
    ASSERT_EQ(p.test(r, &done), 0);
    if (!done) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  EXPECT_EQ(done, 1);
  float a = 1, b = 0;
  EXPECT_EQ(p.iallreduce(&a, &b, 1, 11, LUDA_MPI_SUM, &r), LUDA_MPI_ERR_DTYPE);  // float16: no MPI type
  EXPECT_EQ(p.iallreduce(&a, &b, 1, LUDA_MPI_COMPLEX64, LUDA_MPI_MAX, &r), LUDA_MPI_ERR_OP);
  EXPECT_EQ(r, nullptr);
  char text[256];
  p.error_string(LUDA_MPI_ERR_DTYPE, text, sizeof text);
  EXPECT_STREQ(text, "no MPI type for this dtype");
  p.error_string(1, text, sizeof text);  // MPI_ERR_BUFFER in every MPI: MPI's own words
  EXPECT_GT(std::strlen(text), 0u);
  p.error_string(1, text, 8);
  EXPECT_EQ(std::strlen(text), 7u);
}

}  // namespace
}  // namespace luda::dist
