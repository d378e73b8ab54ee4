// A differential test of the float32 kernel (metrics_f32_impl.h): the same
// pairs widened to float64 (exactly) go through the generic float64 kernel,
// which computes every metric without bounds or screens. Many random mixtures
// aimed at the screens' edges and at the histogram's cuts must give the same
// counts, indices and extrema, and sums equal to 1e-12. Each instruction-set
// variant this machine has runs: the float32 kernel's AVX-512VL and AVX2
// builds must agree bit for bit, the float64 kernel's AVX2 and baseline
// builds to 1e-12.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include "compare/metrics.h"
#include "compare/metrics_kernel.h"

namespace parity {
namespace {

Tensor Widened(const Tensor& f32) {
  Tensor out(DType::kFloat64, f32.shape());
  const auto in = f32.view<float>();
  auto v = out.mutable_view<double>();
  for (size_t i = 0; i < in.size(); ++i) v[i] = in[i];
  return out;
}

void ExpectNear(const char* what, double a, double b, double scale = 0) {
  if (std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a)) << what;
    return;
  }
  if (std::isinf(b)) {
    EXPECT_EQ(a, b) << what;
    return;
  }
  EXPECT_LE(std::fabs(a - b), 1e-12 * std::max({std::fabs(a), std::fabs(b), scale})) << what << ": " << a
                                                                                      << " vs " << b;
}

using compare_internal::KernelIsa;

TensorMetrics Metrics(const Tensor& ref, const Tensor& test, const MetricsOptions& o, KernelIsa isa) {
  compare_internal::KernelIsaCap() = isa;
  auto m = ComputeMetrics(ref, test, o);
  compare_internal::KernelIsaCap() = KernelIsa::kAny;
  EXPECT_TRUE(m.has_value());
  return m.value_or(TensorMetrics{});
}

// One random mixture: a base distribution, then stretches of zeros, of
// differences on the tolerance boundary or on a histogram edge, of tiny,
// huge, near-constant and equal values.
void Fill(std::mt19937_64& rng, std::vector<float>& r, std::vector<float>& t, double atol, double rtol) {
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> g(0, 1);
  const double scale = std::pow(10.0, -6 + 10 * u(rng));
  const double noise = std::pow(10.0, -9 + 8 * u(rng));
  for (size_t i = 0; i < r.size(); ++i) {
    const double x = scale * g(rng);
    r[i] = static_cast<float>(x);
    t[i] = static_cast<float>(x + scale * noise * g(rng));
  }
  const int stretches = 1 + static_cast<int>(u(rng) * 6);
  for (int s = 0; s < stretches; ++s) {
    const size_t a = static_cast<size_t>(u(rng) * static_cast<double>(r.size()));
    const size_t b = std::min(r.size(), a + 1 + static_cast<size_t>(u(rng) * 3000));
    const int kind = static_cast<int>(u(rng) * 8);
    const double edge = std::pow(10.0, -9 + static_cast<int>(u(rng) * 10));  // a histogram edge
    for (size_t i = a; i < b; ++i) {
      switch (kind) {
        case 0:  // ReLU zeros, some differing
          if (r[i] < 0) r[i] = 0, t[i] = u(rng) < 0.2 ? static_cast<float>(1e-7 * u(rng)) : 0.f;
          break;
        case 1: {  // on the tolerance boundary
          const double tol = atol + rtol * std::fabs(static_cast<double>(r[i]));
          t[i] = static_cast<float>(r[i] + tol * (u(rng) < 0.5 ? 1 : -1) * (1 + 1e-7 * g(rng)));
          break;
        }
        case 2: r[i] = static_cast<float>(1e-38 * g(rng)), t[i] = static_cast<float>(1e-38 * g(rng)); break;
        case 3: r[i] = static_cast<float>(1e38 * g(rng)), t[i] = static_cast<float>(-1e38 * g(rng)); break;
        case 4: t[i] = r[i]; break;
        case 5: r[i] = static_cast<float>(1e3 + 1e-3 * g(rng)), t[i] = r[i] + 1e-4f; break;
        case 6: {  // |d| on a histogram cut: the float32 values around it
          const float c = static_cast<float>(kHistogramCuts[1 + static_cast<int>(u(rng) * (kHistogramBins - 2))]);
          const float near[] = {std::nextafter(c, 0.f), c, std::nextafter(c, 1e30f)};
          const float a = near[static_cast<int>(u(rng) * 3)];
          r[i] = u(rng) < 0.5 ? 0.f : static_cast<float>(4 * c * g(rng));
          t[i] = r[i] + (u(rng) < 0.5 ? a : -a);
          break;
        }
        default:  // |d| within 1e-5 of a histogram edge, on either side
          r[i] = static_cast<float>(g(rng) * edge * 1e3);
          t[i] = static_cast<float>(r[i] + edge * (1 + 1e-5 * g(rng)));
          break;
      }
    }
  }
}

// Counts, indices and extrema equal; sums to 1e-12 (or bit for bit).
void ExpectSame(const TensorMetrics& a, const TensorMetrics& b, bool bitwise = false) {
  EXPECT_EQ(a.finite_pairs, b.finite_pairs);
  EXPECT_EQ(a.mismatches, b.mismatches);
  EXPECT_EQ(a.rel_undefined, b.rel_undefined);
  EXPECT_EQ(a.histogram, b.histogram);
  EXPECT_EQ(a.max_abs_flat_index, b.max_abs_flat_index);
  EXPECT_EQ(a.max_abs, b.max_abs);
  EXPECT_EQ(a.max_rel, b.max_rel);
  EXPECT_EQ(a.ref_min, b.ref_min);
  EXPECT_EQ(a.ref_max, b.ref_max);
  if (bitwise) {
    for (auto [x, y] : {std::pair{a.mean_abs, b.mean_abs}, {a.rmse, b.rmse}, {a.cosine, b.cosine},
                        {a.snr_db, b.snr_db}, {a.ref_mean, b.ref_mean}, {a.ref_std, b.ref_std}})
      EXPECT_TRUE(std::memcmp(&x, &y, sizeof x) == 0) << x << " vs " << y;
    return;
  }
  ExpectNear("mean_abs", a.mean_abs, b.mean_abs);
  ExpectNear("rmse", a.rmse, b.rmse);
  ExpectNear("cosine", a.cosine, b.cosine, 1.0);
  ExpectNear("snr_db", a.snr_db, b.snr_db, 1.0);
  ExpectNear("ref_mean", a.ref_mean, b.ref_mean, a.ref_std);
  ExpectNear("ref_std", a.ref_std, b.ref_std);
}

TEST(Float32Kernel, AgreesWithTheFloat64KernelOnRandomMixtures) {
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> u(0, 1);
  // Without AVX-512VL, kAny already runs the AVX2 build: the agreement below
  // then compares AVX2 with itself, and the output says so.
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  std::printf("  float32 kernel builds compared: %s\n",
              avx512 ? "AVX-512VL against AVX2" : "AVX2 against itself (this CPU has no AVX-512VL)");
  if (!avx512) RecordProperty("avx512_compared", "no");
  for (int round = 0; round < 150; ++round) {
    SCOPED_TRACE(round);
    const size_t n = 1 + static_cast<size_t>(u(rng) * 70000);
    const double atol = round % 5 == 0 ? 0.0 : std::pow(10.0, -8 + 6 * u(rng));
    const double rtol = round % 7 == 0 ? 0.0 : std::pow(10.0, -6 + 5 * u(rng));
    std::vector<float> rv(n), tv(n);
    Fill(rng, rv, tv, atol, rtol);
    const Tensor ref = Tensor::FromVector(DType::kFloat32, {static_cast<int64_t>(n)}, rv);
    const Tensor test = Tensor::FromVector(DType::kFloat32, {static_cast<int64_t>(n)}, tv);
    const MetricsOptions o{.atol = atol, .rtol = rtol, .threads = 1};
    const TensorMetrics a = Metrics(ref, test, o, KernelIsa::kAny);
    const TensorMetrics b = Metrics(Widened(ref), Widened(test), o, KernelIsa::kAny);
    ExpectSame(a, b);
    // The other builds of each kernel, where this CPU runs them.
    const TensorMetrics a2 = Metrics(ref, test, o, KernelIsa::kAvx2);
    ExpectSame(a2, a, /*bitwise=*/true);
    ExpectSame(Metrics(Widened(ref), Widened(test), o, KernelIsa::kBaseline), b);
  }
}

}  // namespace
}  // namespace parity
