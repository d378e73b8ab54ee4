// ComputeMetrics gives bitwise identical results for any thread count (the
// partial results of fixed chunks are merged in order; see metrics.h).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "compare/metrics.h"

namespace parity {
namespace {

// Bitwise equality of every double, so that -0.0 vs 0.0 or a last-bit
// difference in a sum fails too.
bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void ExpectIdentical(const TensorMetrics& a, const TensorMetrics& b) {
  for (auto [x, y] : {std::pair{a.max_abs, b.max_abs},
                      {a.max_rel, b.max_rel},
                      {a.mean_abs, b.mean_abs},
                      {a.rmse, b.rmse},
                      {a.cosine, b.cosine},
                      {a.snr_db, b.snr_db},
                      {a.ref_min, b.ref_min},
                      {a.ref_max, b.ref_max},
                      {a.ref_mean, b.ref_mean},
                      {a.ref_std, b.ref_std},
                      {a.ref_at_max, b.ref_at_max},
                      {a.test_at_max, b.test_at_max}}) {
    EXPECT_TRUE(SameBits(x, y)) << x << " vs " << y;
  }
  EXPECT_EQ(a.max_abs_flat_index, b.max_abs_flat_index);
  EXPECT_EQ(a.mismatches, b.mismatches);
  EXPECT_EQ(a.rel_undefined, b.rel_undefined);
  EXPECT_EQ(a.finite_pairs, b.finite_pairs);
  EXPECT_EQ(a.histogram, b.histogram);
}

TEST(ComputeMetrics, ResultsDoNotDependOnThreadCount) {
  const int64_t n = (int64_t{5} << 20) + 12345;  // several chunks per thread, a ragged end
  Tensor ref(DType::kFloat32, {n}), test(DType::kFloat32, {n});
  std::mt19937_64 rng(11);
  std::normal_distribution<float> g(0.f, 1.f);
  auto r = ref.mutable_view<float>();
  auto t = test.mutable_view<float>();
  for (int64_t i = 0; i < n; ++i) {
    r[i] = g(rng);
    t[i] = r[i] + 1e-4f * g(rng);
    if (i % 1000 < 300) r[i] = r[i] > 0 ? r[i] : 0.f;  // ReLU-like stretches: zeros in the reference
    if (i % 100003 == 7) t[i] = r[i] + 1.f;            // a few mismatches
  }
  auto one = ComputeMetrics(ref, test, {.atol = 1e-4, .rtol = 1e-3, .threads = 1});
  ASSERT_TRUE(one.has_value());
  EXPECT_GT(one->rel_undefined, 0);
  EXPECT_GT(one->mismatches, 0);
  for (int threads : {2, 3, 7}) {
    SCOPED_TRACE(threads);
    auto many = ComputeMetrics(ref, test, {.atol = 1e-4, .rtol = 1e-3, .threads = threads});
    ASSERT_TRUE(many.has_value());
    ExpectIdentical(*one, *many);
  }
}

}  // namespace
}  // namespace parity
