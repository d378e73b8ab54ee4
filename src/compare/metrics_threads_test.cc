// ComputeMetrics gives bitwise identical results for any thread count (the
// partial results of fixed chunks are merged in order; see metrics.h), and
// with a band chosen from the reference during the pass
// (MetricsOptions::band_from_reference) the same results as with that band
// given from the start.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
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

void Set(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::kFloat32: t.mutable_view<float>()[i] = static_cast<float>(v); break;
    case DType::kFloat64: t.mutable_view<double>()[i] = v; break;
    case DType::kFloat16: t.mutable_view<uint16_t>()[i] = FloatToHalf(static_cast<float>(v)); break;
    case DType::kInt32: t.mutable_view<int32_t>()[i] = static_cast<int32_t>(v); break;
    default: FAIL() << "dtype not used here";
  }
}

// A band of 1e-4 x rms(ref) and rtol 1e-3, the scaled default's shape.
MismatchBand ScaledBand(const TensorMetrics& stats) {
  return {1e-4 * std::sqrt(stats.ref_std * stats.ref_std + stats.ref_mean * stats.ref_mean), 1e-3};
}

// Runs ComputeMetrics with the band chosen from the reference and checks the
// statistics handed over and every result against a run given that band.
void ExpectBandFromReferenceMatches(const Tensor& ref, const Tensor& test, int threads) {
  TensorMetrics seen;
  int calls = 0;
  MetricsOptions deferred{.threads = threads};
  deferred.band_from_reference = [&](const TensorMetrics& stats) {
    ++calls;
    seen = stats;
    return ScaledBand(stats);
  };
  auto got = ComputeMetrics(ref, test, deferred);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  EXPECT_EQ(calls, 1);
  auto self = ComputeMetrics(ref, ref, {.threads = threads});
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(seen.count, self->count);
  EXPECT_EQ(seen.ref_finite, self->ref_finite);
  EXPECT_EQ(seen.ref_min, self->ref_min);
  EXPECT_EQ(seen.ref_max, self->ref_max);
  EXPECT_NEAR(seen.ref_mean, self->ref_mean, 1e-12 * (1 + self->ref_std));
  EXPECT_NEAR(seen.ref_std, self->ref_std, 1e-12 * (1 + self->ref_std));
  const MismatchBand band = ScaledBand(seen);
  auto direct = ComputeMetrics(ref, test, {.atol = band.atol, .rtol = band.rtol, .threads = threads});
  ASSERT_TRUE(direct.has_value());
  ExpectIdentical(*got, *direct);
  EXPECT_EQ(got->atol, band.atol);
  EXPECT_EQ(got->rtol, band.rtol);
  EXPECT_EQ(got->nan_mismatch, direct->nan_mismatch);
  EXPECT_EQ(got->inf_mismatch, direct->inf_mismatch);
}

TEST(ComputeMetrics, BandFromTheReferenceCountsAsTheBandGivenUpFront) {
  const int64_t n = (int64_t{3} << 20) + 777;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0, 1);
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    for (int variant = 0; variant < 4; ++variant) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dt) << " variant " << variant);
      Tensor ref(dt, {n}), test(dt, {n});
      for (int64_t i = 0; i < n; ++i) {
        double r = 3 * g(rng);
        double t = r + 1e-5 * g(rng);
        if (variant >= 1 && i > n / 2 && i < n / 2 + 40000) t = r * 1.01;  // a failing stretch in a few chunks
        if (variant >= 2 && i % 99991 == 3) t = std::numeric_limits<double>::quiet_NaN();
        if (variant >= 2 && i % 199999 == 5) r = std::numeric_limits<double>::infinity();
        if (variant == 3) t = r + 1e-2 * g(rng);  // every chunk over the band
        Set(ref, i, r);
        Set(test, i, t);
      }
      for (int threads : {1, 2}) ExpectBandFromReferenceMatches(ref, test, threads);
    }
  }
}

TEST(ComputeMetrics, BandFromTheReferenceOnMixedIntegerAndStringPairs) {
  Tensor ref(DType::kInt32, {1000}), test(DType::kFloat32, {1000});
  for (int64_t i = 0; i < 1000; ++i) {
    Set(ref, i, static_cast<double>(i % 17));
    Set(test, i, static_cast<double>(i % 17) + (i % 100 == 0 ? 0.5 : 0.0));
  }
  ExpectBandFromReferenceMatches(ref, test, 1);
  ExpectBandFromReferenceMatches(ref, ref, 1);
  Tensor a = Tensor::FromStrings({3}, {"x", "y", "z"}), b = Tensor::FromStrings({3}, {"x", "q", "z"});
  MetricsOptions deferred;
  deferred.band_from_reference = [](const TensorMetrics&) { return MismatchBand{0.5, 0.25}; };
  auto m = ComputeMetrics(a, b, deferred);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->mismatches, 1);
  EXPECT_EQ(m->atol, 0.5);
}

TEST(ComputeMetrics, BandFromTheReferenceMustBeNonNegative) {
  Tensor ref(DType::kFloat32, {10}), test(DType::kFloat32, {10});
  MetricsOptions deferred;
  deferred.band_from_reference = [](const TensorMetrics&) { return MismatchBand{-1, 0}; };
  auto m = ComputeMetrics(ref, test, deferred);
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message().find("tolerances must be >= 0"), std::string::npos);
}

}  // namespace
}  // namespace parity
