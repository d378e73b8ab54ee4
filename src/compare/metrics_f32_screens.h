// Part of metrics_f32_impl.h (and, like it, compiled once per instruction set
// into the namespace PARITY_F32_NS): for the blocks whose bounds cannot decide,
// the exact float64 forms of the metrics the main pass decides from bounds,
// and the float32 screens with proven margins that spare most of those blocks
// the exact forms.
//
// Preconditions shared by the screens: float32-sized magnitudes (no |r| or |d|
// near float32's overflow) and no denormal nonzero |r|; F32Block checks them
// and takes the exact forms otherwise.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace parity::compare_internal::PARITY_F32_NS {
namespace {

// The lanes of a vector register (see Lanes32 in metrics_f32_impl.h).
std::array<float, 8> Lanes(__m256 v) {
  alignas(32) std::array<float, 8> x;
  _mm256_store_ps(x.data(), v);
  return x;
}

// For a block whose reference holds a zero: the elements with r == 0 and
// t != 0 (|d| / |r| undefined), and the smallest nonzero |r| (+inf: none).
void ZeroRefPass(const float* r, const float* t, int64_t n, int64_t& undefined, float& min_nz_ar) {
  int64_t u = 0;
  float m = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const float ar = std::fabs(r[i]);
    u += (ar == 0.0f) & (t[i] != 0.0f);
    m = std::min(m, ar == 0.0f ? m : ar);
  }
  undefined = u;
  min_nz_ar = m;
}

// Exact float64 forms of the screened metrics, for the blocks that need them.
int64_t ExactMismatches(const float* r, const float* t, int64_t n, double atol, double rtol) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double rv = r[i], a = std::fabs(static_cast<double>(t[i]) - rv);
    m += !(a <= atol + rtol * std::fabs(rv));
  }
  return m;
}

void ExactRel(const float* r, const float* t, int64_t n, double& max_rel, int64_t& undefined) {
  double m = 0;
  int64_t u = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double rv = r[i], a = std::fabs(static_cast<double>(t[i]) - rv), ar = std::fabs(rv);
    if (ar > 0) {
      m = std::max(m, a / ar);
    } else {
      u += a > 0;
    }
  }
  max_rel = m;
  undefined = u;
}

// Whether some element may exceed the tolerance: a float32 bound a little
// below it (atol32, rtol32 from LowerBound32) that every element within the
// exact tolerance also meets.
bool MayMismatch(const float* r, const float* t, int64_t n, float atol, float rtol) {
  const __m256 abs32 = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 atol32 = _mm256_set1_ps(atol), rtol32 = _mm256_set1_ps(rtol);
  __m256 over = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 R = _mm256_loadu_ps(r + i), T = _mm256_loadu_ps(t + i);
    const __m256 a32 = _mm256_and_ps(_mm256_sub_ps(T, R), abs32);
    over = _mm256_or_ps(over, _mm256_cmp_ps(a32, _mm256_fmadd_ps(_mm256_and_ps(R, abs32), rtol32, atol32), _CMP_GT_OQ));
  }
  return _mm256_movemask_ps(over) != 0;
}

// The screened |d| / |r| (0 where r == 0).
inline __m256 ScreenRel(__m256 R, __m256 T) {
  const __m256 abs32 = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 ar = _mm256_and_ps(R, abs32);
  const __m256 a32 = _mm256_and_ps(_mm256_sub_ps(T, R), abs32);
  return _mm256_and_ps(_mm256_mul_ps(a32, _mm256_rcp_ps(ar)),
                       _mm256_cmp_ps(ar, _mm256_setzero_ps(), _CMP_NEQ_UQ));
}

float ScreenRelMax(const float* r, const float* t, int64_t n) {
  __m256 q = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) q = _mm256_max_ps(ScreenRel(_mm256_loadu_ps(r + i), _mm256_loadu_ps(t + i)), q);
  return std::ranges::max(Lanes(q));
}

// The exact max_rel of a block whose screened maximum is qmax > 0 (every
// nonzero |r| normal): only elements whose screened value is within the
// screen's error of qmax can hold the exact maximum, and only they divide.
double CandidateRel(const float* r, const float* t, int64_t n, double qmax) {
  const float cutoff = static_cast<float>(qmax / ((1.0 + 0x1p-6) * (1.0 + 0x1p-6)));
  const __m256 c = _mm256_set1_ps(std::nextafter(cutoff, 0.0f));
  double m = 0;
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 q = ScreenRel(_mm256_loadu_ps(r + i), _mm256_loadu_ps(t + i));
    for (int lanes = _mm256_movemask_ps(_mm256_cmp_ps(q, c, _CMP_GE_OQ)); lanes != 0; lanes &= lanes - 1) {
      const int64_t k = i + __builtin_ctz(lanes);
      const double rv = r[k];
      m = std::max(m, std::fabs(static_cast<double>(t[k]) - rv) / std::fabs(rv));
    }
  }
  return m;
}

// Mean and M2 of a block in two passes (for near-constant blocks, where
// Σr² - (Σr)²/n would cancel).
void ExactMoments(const float* r, int64_t n, double& mean, double& m2) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += r[i];
  mean = s / static_cast<double>(n);
  double q = 0;
  for (int64_t i = 0; i < n; ++i) q += (r[i] - mean) * (r[i] - mean);
  m2 = q;
}

// The largest float32 not above x (x > 0 finite), scaled down by a margin
// that covers the float32 rounding of the screen.
float LowerBound32(double x) {
  if (x >= std::numeric_limits<float>::max()) return std::numeric_limits<float>::max();
  const double scaled = x * (1.0 - 0x1p-20);
  float f = static_cast<float>(scaled);
  if (static_cast<double>(f) > scaled) f = std::nextafter(f, 0.0f);
  return f;
}

}  // namespace
}  // namespace parity::compare_internal::PARITY_F32_NS
