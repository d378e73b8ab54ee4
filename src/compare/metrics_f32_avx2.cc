// The fast path of ComputeMetrics for float32 against float32 (the common
// case: model outputs and intermediates) on AVX2 + FMA machines, written with
// intrinsics. Chosen by FastBlock (metrics_kernel.h) in place of the generic
// loop of metrics_fast_impl.h; it gives the same results.
//
// Where the generic loop works in float64 throughout, this one keeps in
// float64 only what must be exact there — the difference and the six sums
// (Σ|d|, Σd², Σrt, Σr², Σt², Σr; every float32 product is exact in float64, so
// the FMAs round once, as the plain sums do) and the largest |d| — and decides
// everything else in float32, 8 lanes at a time, as a screen:
//
//   ref min/max        exact in float32.
//   mismatches         an element can only fail `|d| <= atol + rtol*|r|` if it
//                      fails a float32 bound a little below the tolerance; a
//                      block where any element fails the bound is recounted
//                      exactly in float64 (none of a healthy tensor's blocks).
//   max_rel            float32 |d| * rcp(|r|), correct to 2^-10; in a block
//                      whose screened maximum can reach the largest exact
//                      max_rel seen so far, the elements within the screen's
//                      error of that maximum are divided exactly; the other
//                      blocks cannot change the maximum and are skipped.
//   histogram plan     which edges a block must count, from the float32
//                      smallest nonzero and largest |d| (bounds, so at most
//                      more edges are counted than needed); the counts are
//                      exact, in float64.
//   ref std            from Σr and Σr² of the block when the block is not
//                      near-constant; otherwise with a second, exact pass.
//
// Any NaN or Inf makes Σd² non-finite and the block is redone by SlowBlock.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "compare/metrics_kernel.h"

namespace parity::compare_internal::avx2 {
namespace {

double HorizontalSum(__m256d v) {
  const __m128d lo = _mm256_castpd256_pd128(v);
  const __m128d hi = _mm256_extractf128_pd(v, 1);
  const __m128d s = _mm_add_pd(lo, hi);
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// The lanes of a vector register, to reduce after a loop (with the store
// intrinsics: taking a register's address, as memcpy would, makes GCC keep
// the accumulator in memory throughout the loop that fills it).
std::array<float, 8> Lanes(__m256 v) {
  alignas(32) std::array<float, 8> x;
  _mm256_store_ps(x.data(), v);
  return x;
}
std::array<double, 4> Lanes(__m256d v) {
  alignas(32) std::array<double, 4> x;
  _mm256_store_pd(x.data(), v);
  return x;
}
std::array<int64_t, 4> Lanes(__m256i v) {
  alignas(32) std::array<int64_t, 4> x;
  _mm256_store_si256(reinterpret_cast<__m256i*>(x.data()), v);
  return x;
}

// Elements with r == 0 and t != 0 (|d| / |r| undefined).
int64_t RelUndefined(const float* r, const float* t, int64_t n) {
  int64_t u = 0;
  for (int64_t i = 0; i < n; ++i) u += (r[i] == 0.0f) & (t[i] != 0.0f);
  return u;
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

// The screened |d| / |r| of the main loop (0 where r == 0).
inline __m256 ScreenRel(__m256 R, __m256 T) {
  const __m256 abs32 = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 ar = _mm256_and_ps(R, abs32);
  const __m256 a32 = _mm256_and_ps(_mm256_sub_ps(T, R), abs32);
  return _mm256_and_ps(_mm256_mul_ps(a32, _mm256_rcp_ps(ar)),
                       _mm256_cmp_ps(ar, _mm256_setzero_ps(), _CMP_NEQ_UQ));
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

// Pass 3 over the block's differences d (scratch): Σ|d| and max |d| (when
// kSums) and the counts of |d| > e[0..M-1], one pass for all of them.
template <bool kSums, int M>
void SumMaxCount(const double* d, int64_t n, const double* e, double& sum, double& max, int64_t* counted) {
  const __m256d abs64 = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  __m256d s0 = _mm256_setzero_pd(), s1 = s0, m0 = s0, m1 = s0;
  __m256d edge[M > 0 ? M : 1];
  __m256i c[M > 0 ? M : 1];
  for (int q = 0; q < M; ++q) edge[q] = _mm256_set1_pd(e[q]), c[q] = _mm256_setzero_si256();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256d a0 = _mm256_and_pd(_mm256_loadu_pd(d + i), abs64);
    const __m256d a1 = _mm256_and_pd(_mm256_loadu_pd(d + i + 4), abs64);
    if constexpr (kSums) {
      s0 = _mm256_add_pd(s0, a0);
      s1 = _mm256_add_pd(s1, a1);
      m0 = _mm256_max_pd(m0, a0);
      m1 = _mm256_max_pd(m1, a1);
    }
    for (int q = 0; q < M; ++q) {
      c[q] = _mm256_sub_epi64(c[q], _mm256_castpd_si256(_mm256_cmp_pd(a0, edge[q], _CMP_GT_OQ)));
      c[q] = _mm256_sub_epi64(c[q], _mm256_castpd_si256(_mm256_cmp_pd(a1, edge[q], _CMP_GT_OQ)));
    }
  }
  if constexpr (kSums) {
    sum = HorizontalSum(_mm256_add_pd(s0, s1));
    max = std::ranges::max(Lanes(_mm256_max_pd(m0, m1)));
  }
  for (int q = 0; q < M; ++q) {
    const auto x = Lanes(c[q]);
    counted[q] = x[0] + x[1] + x[2] + x[3];
  }
}

template <bool kSums>
void SumMaxCountAny(const double* d, int64_t n, const double* e, int m, double& sum, double& max, int64_t* counted) {
  switch (m) {
    case 0: return SumMaxCount<kSums, 0>(d, n, e, sum, max, counted);
    case 1: return SumMaxCount<kSums, 1>(d, n, e, sum, max, counted);
    case 2: return SumMaxCount<kSums, 2>(d, n, e, sum, max, counted);
    case 3: return SumMaxCount<kSums, 3>(d, n, e, sum, max, counted);
    default: return SumMaxCount<kSums, 4>(d, n, e, sum, max, counted);
  }
}

}  // namespace

bool F32Block(const float* r, const float* t, int64_t n, const KernelParams& p, double* scratch, BlockStats& s) {
  const int64_t n8 = n & ~int64_t{7};
  // The last few elements of a tensor go through the generic loop first, so
  // that a non-finite value there leaves s untouched.
  BlockStats tail;
  if (n8 < n && !avx2::FastBlock<float, float>(r + n8, t + n8, n - n8, p, scratch, tail)) return false;
  if (n8 == 0) {
    Merge(s, tail);
    return true;
  }

  // The mismatch screen: float32 bounds below atol and rtol, used only when
  // the bound never works with denormals (atol 0 or a normal float32; with
  // atol 0, rtol * |r| stays normal for the |r| the block check allows);
  // otherwise every block counts exactly.
  const bool screen_mismatch = (p.atol == 0 || p.atol >= std::numeric_limits<float>::min()) && p.atol < 1e30 &&
                               (p.atol > 0 || p.rtol >= 1e-6) && p.rtol >= 0 && p.rtol < 1e30;
  const __m256 atol32 = _mm256_set1_ps(screen_mismatch ? LowerBound32(p.atol) : 0.0f);
  const __m256 rtol32 = _mm256_set1_ps(screen_mismatch && p.rtol > 0 ? LowerBound32(p.rtol) : 0.0f);

  const __m256 abs32 = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 inf32 = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  const __m256 zero32 = _mm256_setzero_ps();

  __m256 mn = _mm256_loadu_ps(r), mx = mn;
  __m256 minar = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  __m256 qmax = _mm256_setzero_ps();
  __m256 over = _mm256_setzero_ps();  // lanes where |d| may exceed the tolerance
  __m256 mina = _mm256_set1_ps(std::numeric_limits<float>::infinity()), minnz = mina;
  __m256d s_sq = _mm256_setzero_pd(), s_rt = s_sq, s_rr = s_sq, s_tt = s_sq, s_r = s_sq;
  __m256 a32max = _mm256_setzero_ps();

  // Three passes over the block (it stays in L1), each with few enough
  // accumulators for the 16 vector registers: (1) the float64 sums of
  // products, two accumulators each (one FMA per iteration on each, so the
  // loop runs at FMA throughput, not latency), writing d to scratch; (2) the
  // float32 screens; (3) Σ|d|, max |d| and the histogram counts from scratch.
  __m256d s_sq1 = s_sq, s_rt1 = s_sq, s_rr1 = s_sq, s_tt1 = s_sq, s_r1 = s_sq;
  for (int64_t i = 0; i < n8; i += 8) {
    const __m256d r0 = _mm256_cvtps_pd(_mm_loadu_ps(r + i));
    const __m256d t0 = _mm256_cvtps_pd(_mm_loadu_ps(t + i));
    const __m256d r1 = _mm256_cvtps_pd(_mm_loadu_ps(r + i + 4));
    const __m256d t1 = _mm256_cvtps_pd(_mm_loadu_ps(t + i + 4));
    const __m256d d0 = _mm256_sub_pd(t0, r0), d1 = _mm256_sub_pd(t1, r1);
    _mm256_storeu_pd(scratch + i, d0);
    _mm256_storeu_pd(scratch + i + 4, d1);
    s_sq = _mm256_fmadd_pd(d0, d0, s_sq);
    s_sq1 = _mm256_fmadd_pd(d1, d1, s_sq1);
    s_rt = _mm256_fmadd_pd(r0, t0, s_rt);
    s_rt1 = _mm256_fmadd_pd(r1, t1, s_rt1);
    s_rr = _mm256_fmadd_pd(r0, r0, s_rr);
    s_rr1 = _mm256_fmadd_pd(r1, r1, s_rr1);
    s_tt = _mm256_fmadd_pd(t0, t0, s_tt);
    s_tt1 = _mm256_fmadd_pd(t1, t1, s_tt1);
    s_r = _mm256_add_pd(s_r, r0);
    s_r1 = _mm256_add_pd(s_r1, r1);
  }
  s_sq = _mm256_add_pd(s_sq, s_sq1);
  s_rt = _mm256_add_pd(s_rt, s_rt1);
  s_rr = _mm256_add_pd(s_rr, s_rr1);
  s_tt = _mm256_add_pd(s_tt, s_tt1);
  s_r = _mm256_add_pd(s_r, s_r1);
  for (int64_t i = 0; i < n8; i += 8) {
    // The next block, on its way to the cache while this one is in L1.
    _mm_prefetch(reinterpret_cast<const char*>(r + n + i), _MM_HINT_T1);
    _mm_prefetch(reinterpret_cast<const char*>(t + n + i), _MM_HINT_T1);
    const __m256 R = _mm256_loadu_ps(r + i);
    const __m256 T = _mm256_loadu_ps(t + i);
    mn = _mm256_min_ps(mn, R);
    mx = _mm256_max_ps(mx, R);
    const __m256 ar = _mm256_and_ps(R, abs32);
    minar = _mm256_min_ps(minar, ar);
    const __m256 a32 = _mm256_and_ps(_mm256_sub_ps(T, R), abs32);
    // |d| / |r| where r != 0 (r == 0 is left out of max_rel, see metrics.h).
    qmax = _mm256_max_ps(ScreenRel(R, T), qmax);
    over = _mm256_or_ps(over, _mm256_cmp_ps(a32, _mm256_fmadd_ps(ar, rtol32, atol32), _CMP_GT_OQ));
    a32max = _mm256_max_ps(a32max, a32);
    mina = _mm256_min_ps(mina, a32);
    // Zeros (identical elements) replaced by +inf: the smallest nonzero |d|.
    minnz = _mm256_min_ps(minnz, _mm256_blendv_ps(a32, inf32, _mm256_cmp_ps(a32, zero32, _CMP_EQ_OQ)));
  }

  // Every accumulator to scalars before anything is called (a vector
  // register live across a call is kept in memory, loops included).
  const double sum_sq = HorizontalSum(s_sq), sum_rt = HorizontalSum(s_rt), sum_rr = HorizontalSum(s_rr);
  const double sum_tt = HorizontalSum(s_tt), sum_r = HorizontalSum(s_r);
  const float ref_min = std::ranges::min(Lanes(mn)), ref_max = std::ranges::max(Lanes(mx));
  const float min_ar = std::ranges::min(Lanes(minar)), q32 = std::ranges::max(Lanes(qmax));
  const float a32_max = std::ranges::max(Lanes(a32max));
  const bool any_over = _mm256_movemask_ps(over) != 0;
  const float min_a32 = std::ranges::min(Lanes(mina)), min_nz32 = std::ranges::min(Lanes(minnz));

  BlockStats b;
  // Any NaN or Inf in r or t makes some d non-finite, and then Σd².
  if (!std::isfinite(sum_sq)) return false;
  b.pairs = n8;
  b.sum_sq = sum_sq;
  b.sum_rt = sum_rt;
  b.sum_rr = sum_rr;
  b.sum_tt = sum_tt;
  b.ref_min = ref_min;
  b.ref_max = ref_max;

  // Pass 3. The edges are planned from float32 bounds: |d| is zero exactly
  // when the float32 |d| is; the float32 minimum of the nonzero ones, widened
  // by its rounding, bounds the exact one from below, the float32 maximum
  // from above (an edge planned in vain counts 0 or all, which is still right).
  const double min_nz = std::isinf(min_nz32) ? std::numeric_limits<double>::max() : min_nz32 * (1.0 - 0x1p-22);
  const double min_a = min_a32 == 0 ? 0.0 : min_nz;
  const double max_a_bound = static_cast<double>(a32_max) * (1.0 + 0x1p-22);
  const EdgePlan plan = PlanEdges(min_a, min_nz, max_a_bound);
  int64_t counted[kEdges];
  SumMaxCountAny<true>(scratch, n8, plan.edge, std::min(plan.m, 4), b.sum_abs, b.max_abs, counted);
  for (int j = 4; j < plan.m; j += 4)
    SumMaxCountAny<false>(scratch, n8, plan.edge + j, std::min(plan.m - j, 4), b.sum_abs, b.max_abs, counted + j);
  AddEdgeCounts(plan, counted, n8, min_a, min_nz, max_a_bound, b);

  // The screens below assume float32-sized magnitudes: no |r| or |d| near
  // float32's overflow, and no denormal |r| (rcpps would overflow on it; a
  // zero |r| is masked out of the max_rel screen). With atol 0, the
  // tolerance is rtol * |r| alone, and then no zero |r| either.
  const bool normal_range = b.ref_max < 1e30 && b.ref_min > -1e30 && b.max_abs < 1e30;
  const bool has_zero_ref = min_ar == 0;
  bool normal_ar = min_ar == 0 || min_ar >= std::numeric_limits<float>::min();
  if (has_zero_ref && normal_ar) {  // is every nonzero |r| normal, too?
    __m256 nz = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    for (int64_t i = 0; i < n8; i += 8) {
      const __m256 ar = _mm256_and_ps(_mm256_loadu_ps(r + i), abs32);
      nz = _mm256_min_ps(nz, _mm256_blendv_ps(ar, nz, _mm256_cmp_ps(ar, zero32, _CMP_EQ_OQ)));
    }
    normal_ar = std::ranges::min(Lanes(nz)) >= std::numeric_limits<float>::min();
  }

  // Mismatches: exact recount only where the screen saw a candidate.
  if (!screen_mismatch || !normal_range || (p.atol == 0 && (has_zero_ref || !normal_ar)) ||
      any_over)
    b.mismatches = ExactMismatches(r, t, n8, p.atol, p.rtol);

  // max_rel: a block is recomputed exactly unless its screened maximum,
  // widened by the screen's error bound (and then some: rcpps's error is
  // specified to 1.5 * 2^-12), stays below the largest exact max_rel so far
  // (s.max_rel: of this chunk, seeded with the earlier chunks of the thread).
  // An infinite screened value (a large |d| over a tiny |r|) bounds nothing.
  const double q = q32;
  if (!normal_range || !normal_ar || std::isinf(q)) {
    ExactRel(r, t, n8, b.max_rel, b.rel_undefined);
  } else {
    if (q > 0 && q * (1.0 + 0x1p-6) >= s.max_rel) b.max_rel = CandidateRel(r, t, n8, q);
    if (has_zero_ref) b.rel_undefined = RelUndefined(r, t, n8);
  }

  // Moments of the reference: from the sums unless the block is near-constant.
  const double nd = static_cast<double>(n8);
  const double s_r_total = sum_r;
  double mean = s_r_total / nd, m2 = b.sum_rr - s_r_total * mean;
  if (!(m2 * 4 > b.sum_rr)) ExactMoments(r, n8, mean, m2);
  AddRefMoments(b, n8, mean - p.ref_shift, std::max(0.0, m2));

  Merge(s, b);
  Merge(s, tail);
  return true;
}

}  // namespace parity::compare_internal::avx2
