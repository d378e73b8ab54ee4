// Internal to metrics.cc: the per-block kernels of ComputeMetrics.
//
// A block is processed by FastBlock, a branch-free loop that GCC vectorizes
// (metrics_fast_impl.h, compiled with reassociation allowed, once for baseline
// x86-64 and once for AVX2 + F16C, picked at run time). FastBlock assumes every
// pair is finite; it detects the contrary from the sum of |d| (any NaN or Inf in
// r or t makes it non-finite) and then the block is redone by SlowBlock, a
// scalar loop that classifies every element. The histogram runs as a second
// loop over the block's |d|, kept in an L1-sized scratch buffer, and only over
// the cuts that fall inside the block's [min nonzero |d|, max |d|]. float32
// pairs take their own kernel (metrics_f32_impl.h), which gives the same
// results.
#pragma once

#include <cpuid.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "compare/metrics.h"
#include "core/dtype.h"

namespace parity::compare_internal {

struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};
struct Bool8 {
  uint8_t v;
};

template <typename V>
inline double Widen(V v) {
  if constexpr (std::is_same_v<V, F16>) {
    return HalfToFloat(v.bits);
  } else if constexpr (std::is_same_v<V, BF16>) {
    return BFloat16ToFloat(v.bits);
  } else if constexpr (std::is_same_v<V, Bool8>) {
    return v.v != 0 ? 1.0 : 0.0;
  } else {
    return static_cast<double>(v);
  }
}

template <typename V>
inline constexpr bool kIs64BitInt = std::is_same_v<V, int64_t> || std::is_same_v<V, uint64_t>;

// t - r in float64. 64-bit integers subtract in 128 bits first, so that a
// nonzero difference stays nonzero (integers compare exactly).
template <typename R, typename T>
inline double Diff(R r, T t, double rv, double tv) {
  if constexpr (kIs64BitInt<R> && kIs64BitInt<T>) {
    return static_cast<double>(static_cast<__int128>(t) - static_cast<__int128>(r));
  } else {
    return tv - rv;
  }
}

inline constexpr int kEdges = kHistogramBins - 1;

// Partial statistics of a run of elements; merged in element order.
struct BlockStats {
  int64_t pairs = 0;  // finite pairs
  double sum_abs = 0, sum_sq = 0, sum_rt = 0, sum_rr = 0, sum_tt = 0;
  double max_abs = -1;  // -1: no finite pair yet
  double max_rel = 0;
  int64_t rel_undefined = 0, mismatches = 0;
  int64_t nan_ref = 0, nan_test = 0, inf_ref = 0, inf_test = 0;
  int64_t nan_mismatch = 0, nan_equal = 0, inf_equal = 0, inf_mismatch = 0;
  int64_t ref_n = 0;
  double ref_min = std::numeric_limits<double>::infinity();
  double ref_max = -std::numeric_limits<double>::infinity();
  double ref_mean = 0, ref_m2 = 0;      // Chan et al.: mean (relative to ref_shift) and M2
  std::array<int64_t, kEdges> above{};  // finite pairs with |d| > edge k
};

// Folds `b` (later elements) into `a`.
void Merge(BlockStats& a, const BlockStats& b);

// Adds n reference values with mean `mean` and M2 `m2` to s (Chan's update).
inline void AddRefMoments(BlockStats& s, int64_t n, double mean, double m2) {
  if (n == 0) return;
  if (s.ref_n == 0) {
    s.ref_n = n;
    s.ref_mean = mean;
    s.ref_m2 = m2;
    return;
  }
  const double na = static_cast<double>(s.ref_n), nb = static_cast<double>(n);
  const double total = na + nb;
  const double delta = mean - s.ref_mean;
  s.ref_mean += delta * (nb / total);
  s.ref_m2 += m2 + delta * delta * (na * nb / total);
  s.ref_n += n;
}

struct KernelParams {
  double atol;
  double rtol;
  // A finite reference value. Block means are kept relative to it, so that
  // merging blocks of a near-constant tensor (1000 + 1e-6 noise) subtracts
  // small numbers, not rounded large ones.
  double ref_shift = 0;
};

inline constexpr int64_t kBlock = 2048;  // elements; scratch of |d| stays in L1

// Fast path over n <= kBlock elements, all assumed finite. Returns false (and
// leaves s untouched) when a non-finite value or difference is present.
// Defined in metrics_fast_impl.h, which is compiled with reassociation allowed
// so that GCC vectorizes the reductions, once per instruction set; instantiated
// there for every dtype pair.
#define PARITY_DECLARE_FAST_BLOCK   \
  template <typename R, typename T> \
  bool FastBlock(const R* r, const T* t, int64_t n, const KernelParams& p, double* scratch, BlockStats& s);
namespace baseline {
PARITY_DECLARE_FAST_BLOCK
}
namespace avx2 {
PARITY_DECLARE_FAST_BLOCK
}
#undef PARITY_DECLARE_FAST_BLOCK

// Which histogram edges a block must count, from its smallest |d| (min_a:
// only whether it is 0 matters), a lower bound of its smallest nonzero |d| and
// an upper bound of its largest. Edges outside [min_nz, max_a) need no pass
// over the data: all nonzero |d| or none are above them. Exact zeros
// (identical elements) are common and only edge 0 has to count them.
struct EdgePlan {
  int m = 0;             // edges to count
  int todo[kEdges];      // their indices, ascending
  double edge[kEdges];   // their values
};

inline EdgePlan PlanEdges(double min_a, double min_nz, double max_a) {
  EdgePlan p;
  if (min_a == 0 && max_a > 0) p.todo[p.m++] = 0;
  for (int k = 1; k < kEdges; ++k) {
    if (!(min_nz > kHistogramCuts[k]) && max_a > kHistogramCuts[k]) p.todo[p.m++] = k;
  }
  for (int j = 0; j < p.m; ++j) p.edge[j] = kHistogramCuts[p.todo[j]];
  return p;
}

// Adds the counts of the planned edges (counted[j]: |d| > edge[j] among the
// block's n finite pairs) and those the plan implies to s.above.
inline void AddEdgeCounts(const EdgePlan& p, const int64_t* counted, int64_t n, double min_a, double min_nz,
                          double max_a, BlockStats& s) {
  // Edge 0 is counted (first) only when there are zeros and nonzeros.
  const int64_t nonzero = min_a > 0 ? n : (max_a > 0 ? counted[0] : 0);
  int j = 0;
  for (int k = 0; k < kEdges; ++k) {
    if (j < p.m && p.todo[j] == k) {
      s.above[k] += counted[j++];
    } else if (k == 0 || min_nz > kHistogramCuts[k]) {
      s.above[k] += nonzero;
    }
  }
}

// float32 against float32 with intrinsics (metrics_f32_impl.h), on AVX2 + FMA
// machines and, with 32 vector registers, on AVX-512VL ones; the same
// contract as FastBlock and bitwise the same results.
namespace avx2 {
bool F32Block(const float* r, const float* t, int64_t n, const KernelParams& p, double* scratch, BlockStats& s);
}
namespace avx512 {
bool F32Block(const float* r, const float* t, int64_t n, const KernelParams& p, double* scratch, BlockStats& s);
}

// Tests only: the widest instruction set the kernels may use, so that every
// variant can be checked on a machine that has them all.
enum class KernelIsa { kAny, kBaseline, kAvx2 };
inline std::atomic<KernelIsa>& KernelIsaCap() {
  static std::atomic<KernelIsa> cap{KernelIsa::kAny};
  return cap;
}

// Whether this CPU runs the AVX2 + F16C variants (checked once). Every block
// of every call then takes the same variant, so results do not depend on the
// thread count.
inline bool CpuHasAvx2() {
  // F16C is read from CPUID leaf 1 (ECX bit 29): clang's
  // __builtin_cpu_supports does not know "f16c" (the fuzz build uses clang).
  static const bool avx2 = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  }();
  return avx2;
}
inline bool UseAvx2Kernel() {
  return CpuHasAvx2() && KernelIsaCap().load(std::memory_order_relaxed) != KernelIsa::kBaseline;
}

// True when the float32 kernel can use AVX-512VL (which also needs the OS to
// save the wider registers; __builtin_cpu_supports checks that).
inline bool UseAvx512Kernel() {
  static const bool avx512 =
      CpuHasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  return avx512 && KernelIsaCap().load(std::memory_order_relaxed) == KernelIsa::kAny;
}

template <typename R, typename T>
bool FastBlock(const R* r, const T* t, int64_t n, const KernelParams& p, double* scratch, BlockStats& s) {
  if constexpr (std::is_same_v<R, float> && std::is_same_v<T, float>) {
    if (UseAvx512Kernel()) return avx512::F32Block(r, t, n, p, scratch, s);
    if (UseAvx2Kernel()) return avx2::F32Block(r, t, n, p, scratch, s);
  }
  return UseAvx2Kernel() ? avx2::FastBlock(r, t, n, p, scratch, s)
                         : baseline::FastBlock(r, t, n, p, scratch, s);
}

// Scalar path: classifies NaN and Inf element by element.
template <typename R, typename T>
void SlowBlock(const R* r, const T* t, int64_t n, const KernelParams& p, BlockStats& s) {
  BlockStats b;
  double shift = 0;
  bool have_shift = false;
  double rs_sum = 0, rs2_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double rv = Widen(r[i]);
    const double tv = Widen(t[i]);
    const bool rn = std::isnan(rv), tn = std::isnan(tv);
    const bool ri = std::isinf(rv), ti = std::isinf(tv);
    b.nan_ref += rn;
    b.nan_test += tn;
    b.inf_ref += ri;
    b.inf_test += ti;
    if (!rn && !ri) {
      if (!have_shift) shift = rv, have_shift = true;
      ++b.ref_n;
      rs_sum += rv - shift;
      rs2_sum += (rv - shift) * (rv - shift);
      b.ref_min = std::min(b.ref_min, rv);
      b.ref_max = std::max(b.ref_max, rv);
    }
    if (rn || tn) {
      if (rn && tn) {
        ++b.nan_equal;
      } else {
        ++b.nan_mismatch;
        ++b.mismatches;
      }
      continue;
    }
    if (ri || ti) {
      if (rv == tv) {
        ++b.inf_equal;
      } else {
        ++b.inf_mismatch;
        ++b.mismatches;
      }
      continue;
    }
    const double d = Diff(r[i], t[i], rv, tv);
    const double a = std::fabs(d);
    ++b.pairs;
    b.sum_abs += a;
    b.sum_sq += d * d;
    b.sum_rt += rv * tv;
    b.sum_rr += rv * rv;
    b.sum_tt += tv * tv;
    b.max_abs = std::max(b.max_abs, a);
    const double ar = std::fabs(rv);
    if (ar > 0) {
      b.max_rel = std::max(b.max_rel, a / ar);
    } else if (a > 0) {
      ++b.rel_undefined;
    }
    // Written as !(a <= tol) like NumPy, so that an infinite difference of
    // two finite float64 values against an infinite tolerance is still close.
    if (!(a <= p.atol + p.rtol * ar)) ++b.mismatches;
    for (int k = 0; k < kEdges; ++k) b.above[k] += a > kHistogramCuts[k];
  }
  // ref_n is counted above; AddRefMoments adds it again, so reset first.
  const int64_t ref_n = b.ref_n;
  b.ref_n = 0;
  if (ref_n > 0) {
    const double nd = static_cast<double>(ref_n);
    AddRefMoments(b, ref_n, (shift - p.ref_shift) + rs_sum / nd,
                  std::max(0.0, rs2_sum - rs_sum * rs_sum / nd));
  }
  Merge(s, b);
}

// Lowest index in [0, n) of a finite pair with |d| == target, or -1.
template <typename R, typename T>
int64_t FindFirstAbs(const R* r, const T* t, int64_t n, double target) {
  for (int64_t i = 0; i < n; ++i) {
    const double rv = Widen(r[i]), tv = Widen(t[i]);
    if (!std::isfinite(rv) || !std::isfinite(tv)) continue;
    if (std::fabs(Diff(r[i], t[i], rv, tv)) == target) return i;
  }
  return -1;
}

}  // namespace parity::compare_internal
