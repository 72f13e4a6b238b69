// The solver libraries' tables (ops/solver_libraries.h): every entry point luda calls is
// in the libraries it finds, LAPACKE on any machine with Debian's package, cuSOLVER
// wherever the CUDA toolkit is (no GPU needed to load it).
#include "ops/solver_libraries.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "runtime/error.h"

namespace luda::ops::solvers {
namespace {

TEST(SolverLibraries, LapackeHasEveryEntryPoint) {
  std::string path;
  try {
    path = lapacke_path();
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  EXPECT_NE(path.find("lapacke"), std::string::npos) << path;
  const Lapacke& l = lapacke();
  EXPECT_NE(l.dgesdd, nullptr);
  EXPECT_NE(l.sgelsd, nullptr);
}

TEST(SolverLibraries, CusolverHasEveryEntryPoint) {
  std::string path;
  try {
    path = cusolver_path();
  } catch (const Error& e) {
    GTEST_SKIP() << "no cuSOLVER here: " << e.what();
  }
  EXPECT_NE(path.find("cusolver"), std::string::npos) << path;
  const Cusolver& c = cusolver();
  EXPECT_NE(c.cusolverDnXgesvdp, nullptr);
  EXPECT_NE(c.cusolverDnDgesvdj, nullptr);
  EXPECT_NE(c.cusolverDnDormqr, nullptr);
}

// LAPACKE reports a NaN in a matrix as that argument being invalid.
TEST(SolverLibraries, LapackeNanCheckIsTheMatrixArgument) {
  try {
    lapacke();
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  double a[4] = {std::nan(""), 1, 1, 1}, s[2], u[4], vt[4];
  const int info = lapacke().dgesdd(kRowMajor, 'A', 2, 2, a, 2, s, u, 2, vt, 2);
  EXPECT_EQ(info, -5);
  EXPECT_TRUE(lapacke_found_nan(info, {5}));
  EXPECT_FALSE(lapacke_found_nan(0, {5}));
  EXPECT_FALSE(lapacke_found_nan(-6, {5}));
}

TEST(SolverLibraries, DtypesComputeAsNumpyLinalgDoes) {
  EXPECT_EQ(solve_dtype(DType::Float32, "svd"), DType::Float32);
  EXPECT_EQ(solve_dtype(DType::Int32, "svd"), DType::Float64);
  EXPECT_EQ(solve_dtype(DType::UInt64, "svd"), DType::Float64);
  EXPECT_EQ(solve_dtype(DType::Bool, "svd"), DType::Float64);
  EXPECT_EQ(solve_dtype(DType::Complex64, "solve", true), DType::Complex64);
  EXPECT_EQ(solve_dtype(DType::Complex128, "solve", true), DType::Complex128);
  EXPECT_THROW(solve_dtype(DType::Complex64, "svd"), Error);
  EXPECT_EQ(with_solver_type(DType::Float32, [](auto zero) { return sizeof(zero); }), sizeof(float));
  EXPECT_EQ(with_solver_type(DType::Float64, [](auto zero) { return sizeof(zero); }), sizeof(double));
  EXPECT_THROW(with_solver_type(DType::Int8, [](auto zero) { return sizeof(zero); }), InternalError);
  EXPECT_THROW(with_solver_type(DType::Complex64, [](auto zero) { return sizeof(zero); }), InternalError);
  EXPECT_EQ(with_solver_type<true>(DType::Complex64, [](auto zero) { return sizeof(zero); }), 2 * sizeof(float));
  EXPECT_EQ(with_solver_type<true>(DType::Complex128, [](auto zero) { return sizeof(zero); }), 2 * sizeof(double));
  EXPECT_EQ(cuda_type(DType::Float64), CUDA_R_64F);
  EXPECT_EQ(cuda_type(DType::Complex64), CUDA_C_32F);
  EXPECT_EQ(cuda_type(DType::Complex128), CUDA_C_64F);
}

}  // namespace
}  // namespace luda::ops::solvers
