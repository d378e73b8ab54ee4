// The fast path of ComputeMetrics for float32 against float32 (the common
// case: model outputs and intermediates), written with AVX2 + FMA intrinsics.
// Compiled twice (metrics_f32_avx2.cc, and metrics_f32_avx512.cc, where the
// same code gets AVX-512VL's 32 vector registers and no longer spills its
// accumulators) and chosen by FastBlock (metrics_kernel.h) in place of the
// generic loop of metrics_fast_impl.h; it gives the same results.
//
// One pass over the block does what must be exact in float64 — the
// difference d and the six sums (Σ|d|, Σd², Σrt, Σr², Σt², Σr; every float32
// product is exact in float64, so the FMAs round once, as plain sums do) —
// plus the reference's min and max (exact in float32), and it writes for each
// element the upper 32 bits of |d| as an integer, its *key*: for |d| >= 0 the
// key orders like |d|, and a histogram cut (kHistogramCuts, low 32 bits all
// ones) is passed exactly when the key exceeds the cut's. The rest is decided
// per block from bounds, and recomputed only where they cannot decide:
//
//   histogram       the cuts between the block's smallest nonzero key and its
//                   largest are counted, 8 lanes per compare (the others are
//                   implied): with AVX-512VL up to four in the main loop, as
//                   predicted from the previous block, the rest by a second
//                   pass over the keys (L1).
//   max_abs         only a block whose largest key reaches the running
//                   maximum's looks for its exact maximum, among the
//                   elements with that key.
//   mismatches      none when the block's largest |d| (from its key) stays
//                   within atol + rtol * min |r|; otherwise a float32 screen
//                   with a proven margin, and an exact float64 recount only
//                   where the screen sees a candidate.
//   max_rel         skipped when largest |d| / smallest nonzero |r| cannot
//                   reach the running maximum; otherwise a float32 screen
//                   (|d| * rcp(|r|)) and exact division only for the
//                   elements within the screen's error of its maximum.
//   ref std         from Σr and Σr² unless the block is near-constant, where
//                   a second, exact pass avoids the cancellation.
//
// Any NaN or Inf makes Σd² non-finite and the block is redone by SlowBlock.
//
// Include with PARITY_F32_NS defined to the namespace of the variant.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "compare/metrics_f32_screens.h"
#include "compare/metrics_kernel.h"

namespace parity::compare_internal::PARITY_F32_NS {
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
std::array<int32_t, 8> Lanes32(__m256i v) {
  alignas(32) std::array<int32_t, 8> x;
  _mm256_store_si256(reinterpret_cast<__m256i*>(x.data()), v);
  return x;
}

// The key range [lo, hi] of doubles: the smallest and the largest float64
// whose upper 32 bits are `key`.
double KeyLow(int32_t key) { return std::bit_cast<double>(static_cast<uint64_t>(key) << 32); }
double KeyHigh(int32_t key) { return std::bit_cast<double>((static_cast<uint64_t>(key) << 32) | 0xffffffffu); }
int32_t KeyOf(double a) { return static_cast<int32_t>(std::bit_cast<uint64_t>(a) >> 32); }

// The largest exact |d| among the elements whose key is `key` (the block's
// largest): at most a few share it.
double ExactMaxAbs(const float* r, const float* t, const int32_t* keys, int64_t n, int32_t key) {
  const __m256i k = _mm256_set1_epi32(key);
  double m = 0;
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i eq = _mm256_cmpeq_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(keys + i)), k);
    if (_mm256_testz_si256(eq, eq)) continue;
    for (int64_t j = i; j < i + 8; ++j) m = std::max(m, std::fabs(static_cast<double>(t[j]) - r[j]));
  }
  return m;
}

// Counts keys > h[0..M-1] in one pass over the block's keys (in L1).
// (Prefetching the next block from this loop was measured slower: the
// requests outrun the memory system and stall the loop.)
template <int M>
void CountKeys(const int32_t* keys, int64_t n, const int32_t* h, int64_t* counted) {
  __m256i c[M], e[M];
  for (int q = 0; q < M; ++q) c[q] = _mm256_setzero_si256(), e[q] = _mm256_set1_epi32(h[q]);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i k = _mm256_load_si256(reinterpret_cast<const __m256i*>(keys + i));
    for (int q = 0; q < M; ++q) c[q] = _mm256_sub_epi32(c[q], _mm256_cmpgt_epi32(k, e[q]));
  }
  for (int q = 0; q < M; ++q) {
    int64_t total = 0;  // each lane counts at most kBlock / 8
    for (int32_t x : Lanes32(c[q])) total += x;
    counted[q] = total;
  }
}

void CountKeysAny(const int32_t* keys, int64_t n, const int32_t* h, int m, int64_t* counted) {
  for (int j = 0; j < m; j += 6) {
    switch (std::min(6, m - j)) {
      case 1: CountKeys<1>(keys, n, h + j, counted + j); break;
      case 2: CountKeys<2>(keys, n, h + j, counted + j); break;
      case 3: CountKeys<3>(keys, n, h + j, counted + j); break;
      case 4: CountKeys<4>(keys, n, h + j, counted + j); break;
      case 5: CountKeys<5>(keys, n, h + j, counted + j); break;
      default: CountKeys<6>(keys, n, h + j, counted + j); break;
    }
  }
}

// The main pass over a block of n (a multiple of 8) pairs: the float64
// sums, the reference's min and max, the keys, and the counts of keys above
// cuts[0..M-1] (into counted[0..M-1]). Kept apart from the rest
// of the block's work so that its accumulators get registers of their own.
// With AVX2's 16 registers GCC keeps a few of them in memory; splitting the
// loop in two (sums, then ranges from L1) was faster in cache but slower from
// memory, as was every software prefetch tried here: on this kind of machine
// any work between two blocks' streaming loops costs its full time.
struct MainPass {
  double sum_sq, sum_rt, sum_rr, sum_tt, sum_r, sum_abs;
  float ref_min, ref_max;
  int32_t key_max;
  int32_t key_nz;  // the smallest nonzero key (0: none)
  float min_ar;    // the smallest |r| (0 when some r is 0)
};

template <int M>
__attribute__((noinline)) MainPass RunMainPass(const float* r, const float* t, int64_t n, int32_t* keys,
                                               const int32_t* cuts, int64_t* counted) {
  const __m256d abs64 = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  const __m256 abs32 = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256i one = _mm256_set1_epi32(1);
  __m256d s_sq = _mm256_setzero_pd(), s_rt = s_sq, s_rr = s_sq, s_tt = s_sq, s_r = s_sq, s_a = s_sq;
  __m256 mn = _mm256_loadu_ps(r), mx = mn;
  // The smallest nonzero key from the unsigned minimum of key - 1, where 0
  // wraps to the top. (Whether some d is 0 comes from the histogram, and the
  // smallest nonzero |r| of a block with a zero r from ZeroRefPass: registers
  // and operations less in this loop.)
  __m256i kmax = _mm256_setzero_si256(), knz = _mm256_set1_epi32(-1);
  __m256 minar = _mm256_and_ps(mn, abs32);
  __m256i c[M > 0 ? M : 1], e[M > 0 ? M : 1];
  for (int q = 0; q < M; ++q) c[q] = _mm256_setzero_si256(), e[q] = _mm256_set1_epi32(cuts[q]);
  // One accumulator per sum: each takes two dependent adds per iteration,
  // which the loop's other work covers.
  for (int64_t i = 0; i < n; i += 8) {
    const __m256d r0 = _mm256_cvtps_pd(_mm_loadu_ps(r + i));
    const __m256d t0 = _mm256_cvtps_pd(_mm_loadu_ps(t + i));
    const __m256d r1 = _mm256_cvtps_pd(_mm_loadu_ps(r + i + 4));
    const __m256d t1 = _mm256_cvtps_pd(_mm_loadu_ps(t + i + 4));
    const __m256d d0 = _mm256_sub_pd(t0, r0), d1 = _mm256_sub_pd(t1, r1);
    const __m256d a0 = _mm256_and_pd(d0, abs64), a1 = _mm256_and_pd(d1, abs64);
    s_sq = _mm256_fmadd_pd(d0, d0, s_sq);
    s_sq = _mm256_fmadd_pd(d1, d1, s_sq);
    s_rt = _mm256_fmadd_pd(r0, t0, s_rt);
    s_rt = _mm256_fmadd_pd(r1, t1, s_rt);
    s_rr = _mm256_fmadd_pd(r0, r0, s_rr);
    s_rr = _mm256_fmadd_pd(r1, r1, s_rr);
    s_tt = _mm256_fmadd_pd(t0, t0, s_tt);
    s_tt = _mm256_fmadd_pd(t1, t1, s_tt);
    s_r = _mm256_add_pd(s_r, r0);
    s_r = _mm256_add_pd(s_r, r1);
    s_a = _mm256_add_pd(s_a, a0);
    s_a = _mm256_add_pd(s_a, a1);
    const __m256 R = _mm256_loadu_ps(r + i);
    mn = _mm256_min_ps(mn, R);
    mx = _mm256_max_ps(mx, R);
    minar = _mm256_min_ps(minar, _mm256_and_ps(R, abs32));
    // The upper halves of the eight |d|, in the lane order 0 1 4 5 2 3 6 7
    // (counting does not care; ExactMaxAbs looks at all eight).
    const __m256i k = _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castpd_ps(a0), _mm256_castpd_ps(a1), 0xDD));
    _mm256_store_si256(reinterpret_cast<__m256i*>(keys + i), k);
    kmax = _mm256_max_epi32(kmax, k);
    knz = _mm256_min_epu32(knz, _mm256_sub_epi32(k, one));
    for (int q = 0; q < M; ++q) c[q] = _mm256_sub_epi32(c[q], _mm256_cmpgt_epi32(k, e[q]));
  }
  for (int q = 0; q < M; ++q) {
    int64_t total = 0;
    for (int32_t x : Lanes32(c[q])) total += x;
    counted[q] = total;
  }
  alignas(32) float f[3][8];
  alignas(32) int32_t k[8];
  alignas(32) uint32_t u[8];
  _mm256_store_ps(f[0], mn);
  _mm256_store_ps(f[1], mx);
  _mm256_store_ps(f[2], minar);
  _mm256_store_si256(reinterpret_cast<__m256i*>(k), kmax);
  _mm256_store_si256(reinterpret_cast<__m256i*>(u), knz);
  return {.sum_sq = HorizontalSum(s_sq),
          .sum_rt = HorizontalSum(s_rt),
          .sum_rr = HorizontalSum(s_rr),
          .sum_tt = HorizontalSum(s_tt),
          .sum_r = HorizontalSum(s_r),
          .sum_abs = HorizontalSum(s_a),
          .ref_min = *std::min_element(f[0], f[0] + 8),
          .ref_max = *std::max_element(f[1], f[1] + 8),
          .key_max = *std::max_element(k, k + 8),
          .key_nz = static_cast<int32_t>(*std::min_element(u, u + 8) + 1u),
          .min_ar = *std::min_element(f[2], f[2] + 8)};
}

// Cuts counted in the main loop: with AVX-512VL's 32 registers there is room
// for four counters and their cuts; with AVX2's 16 there is none.
#ifdef __AVX512VL__
constexpr int kMaxFused = 4;
#else
constexpr int kMaxFused = 0;
#endif

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

  alignas(32) int32_t keys[kBlock];
  // The histogram's cuts are counted in the main loop, as predicted from the
  // previous block of this thread (memory sits idle during a separate pass
  // over the keys); cuts the block turns out to need beyond those are counted
  // after it. Which cuts are counted where changes no result.
  thread_local EdgePlan last;
  // Of the last block's cuts, cut 0 and the highest (the lowest decades come
  // and go with the block's smallest |d|).
  int fused = 0, pred_todo[kMaxFused + 1] = {};
  int32_t pred_keys[kMaxFused + 1];
  for (int j = 0; j < last.m && fused < kMaxFused; ++j) {
    if (j == 0 && last.todo[0] == 0) {
      pred_todo[fused++] = 0;
    } else {
      j = std::max(j, last.m - (kMaxFused - fused));
      pred_todo[fused++] = last.todo[j];
    }
  }
  for (int j = 0; j < fused; ++j) pred_keys[j] = KeyOf(kHistogramCuts[pred_todo[j]]);
  int64_t pred_counted[kMaxFused + 1];
  MainPass m;
  switch (fused) {
    case 0: m = RunMainPass<0>(r, t, n8, keys, pred_keys, pred_counted); break;
    case 1: m = RunMainPass<1>(r, t, n8, keys, pred_keys, pred_counted); break;
    case 2: m = RunMainPass<2>(r, t, n8, keys, pred_keys, pred_counted); break;
    case 3: m = RunMainPass<3>(r, t, n8, keys, pred_keys, pred_counted); break;
    default: m = RunMainPass<kMaxFused>(r, t, n8, keys, pred_keys, pred_counted); break;
  }
  // Any NaN or Inf in r or t makes some d non-finite, and then Σd².
  if (!std::isfinite(m.sum_sq)) return false;
  BlockStats b;
  b.pairs = n8;
  b.sum_sq = m.sum_sq;
  b.sum_rt = m.sum_rt;
  b.sum_rr = m.sum_rr;
  b.sum_tt = m.sum_tt;
  b.sum_abs = m.sum_abs;
  const double sum_r = m.sum_r;
  b.ref_min = m.ref_min;
  b.ref_max = m.ref_max;
  const int32_t key_max = m.key_max;
  const bool zero_r = m.min_ar == 0;

  // Histogram: the cuts between the smallest nonzero and the largest key,
  // and cut 0 (d == 0) whenever some d is not: the main pass does not know
  // whether some is (zeros are common, from identical elements). For float32
  // pairs a nonzero |d| is at least 2^-149, so key 0 means d == 0.
  const double max_a = key_max == 0 ? 0.0 : KeyHigh(key_max);  // bounds max |d| from above
  const int32_t key_nz = m.key_nz;
  const double min_nz = key_nz == 0 ? std::numeric_limits<double>::max() : KeyLow(key_nz);
  const double min_a = 0;
  const EdgePlan plan = PlanEdges(min_a, min_nz, max_a);
  int64_t counted[kEdges];
  int missing[kEdges], n_missing = 0;
  int32_t missing_keys[kEdges];
  for (int j = 0; j < plan.m; ++j) {
    const int* hit = std::find(pred_todo, pred_todo + fused, plan.todo[j]);
    if (hit != pred_todo + fused) {
      counted[j] = pred_counted[hit - pred_todo];
    } else {
      missing_keys[n_missing] = KeyOf(plan.edge[j]);
      missing[n_missing++] = j;
    }
  }
  if (n_missing > 0) {
    int64_t extra[kEdges];
    CountKeysAny(keys, n8, missing_keys, n_missing, extra);
    for (int q = 0; q < n_missing; ++q) counted[missing[q]] = extra[q];
  }
  AddEdgeCounts(plan, counted, n8, min_a, min_nz, max_a, b);
  last = plan;

  // max_abs: exact only where the block may hold the running maximum (an
  // equal maximum in a later block changes nothing: the first one counts).
  if (s.max_abs < 0 || key_max >= KeyOf(s.max_abs)) b.max_abs = ExactMaxAbs(r, t, keys, n8, key_max);

  // The smallest |r| (0 if any r is zero) and the smallest nonzero |r|.
  float min_nz_ar = m.min_ar;
  if (zero_r) ZeroRefPass(r, t, n8, b.rel_undefined, min_nz_ar);
  const float min_ar = m.min_ar;
  // The float32 screens assume float32-sized magnitudes: no |r| or |d| near
  // float32's overflow and no denormal nonzero |r| (rcpps would overflow).
  const bool normal_range = b.ref_max < 1e30 && b.ref_min > -1e30 && max_a < 1e30;
  const bool normal_ar = min_nz_ar >= std::numeric_limits<float>::min();

  // Mismatches. Every tolerance is at least atol + rtol * min|r| (the
  // float64 tolerance is monotone in |r|; the factor covers either rounding
  // of it), so a block whose largest |d| stays within that has none.
  if (!(max_a <= (p.atol + p.rtol * static_cast<double>(min_ar)) * (1 - 0x1p-50))) {
    // The screen: float32 bounds below atol and rtol, used only when the bound
    // never works with denormals (atol 0 or a normal float32; with atol 0,
    // rtol * |r| stays normal for the |r| the checks allow).
    const bool screen = (p.atol == 0 || p.atol >= std::numeric_limits<float>::min()) && p.atol < 1e30 &&
                        (p.atol > 0 || p.rtol >= 1e-6) && p.rtol < 1e30 && normal_range &&
                        !(p.atol == 0 && (zero_r || !normal_ar));
    if (!screen || MayMismatch(r, t, n8, p.atol > 0 ? LowerBound32(p.atol) : 0.0f,
                               p.rtol > 0 ? LowerBound32(p.rtol) : 0.0f))
      b.mismatches = ExactMismatches(r, t, n8, p.atol, p.rtol);
  }

  // max_rel (r == 0 is left out, see metrics.h). A block is skipped when its
  // bound (largest |d| over smallest nonzero |r|, rounded up) stays below the
  // largest max_rel so far (s.max_rel: of this chunk, seeded with the earlier
  // chunks of the thread); otherwise the screen's maximum, widened by its
  // error bound (and then some: rcpps's error is specified to 1.5 * 2^-12),
  // decides whether the candidates are divided exactly.
  if (key_max > 0 && !std::isinf(min_nz_ar) &&
      !(max_a / static_cast<double>(min_nz_ar) * (1 + 0x1p-50) < s.max_rel)) {
    const double q = normal_range && normal_ar ? ScreenRelMax(r, t, n8) : 0.0;
    if (!normal_range || !normal_ar || std::isinf(q)) {
      ExactRel(r, t, n8, b.max_rel, b.rel_undefined);
    } else if (q > 0 && q * (1.0 + 0x1p-6) >= s.max_rel) {
      b.max_rel = CandidateRel(r, t, n8, q);
    }
  }

  // Moments of the reference: from the sums unless the block is near-constant.
  const double nd = static_cast<double>(n8);
  double mean = sum_r / nd, m2 = b.sum_rr - sum_r * mean;
  if (!(m2 * 4 > b.sum_rr)) ExactMoments(r, n8, mean, m2);
  AddRefMoments(b, n8, mean - p.ref_shift, std::max(0.0, m2));

  Merge(s, b);
  if (n8 < n) Merge(s, tail);
  return true;
}

}  // namespace parity::compare_internal::PARITY_F32_NS
