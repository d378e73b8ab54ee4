// The vectorized fast path of ComputeMetrics (see metrics_kernel.h), included
// once per instruction set: metrics_fast.cc (baseline x86-64) and
// metrics_fast_avx2.cc (AVX2 + F16C), each defining PARITY_FAST_NS first.
//
// Both are compiled with -O3 -fno-trapping-math -fno-signed-zeros
// -fassociative-math -ffinite-math-only (CMakeLists.txt): the loop below
// assumes every value is finite, and lets GCC split each sum, max and count
// into vector lanes. The finiteness of the inputs is checked on the bits of
// sum |d| (a check the finite-math flags cannot fold away); a block that fails
// is redone by SlowBlock with IEEE semantics. Nothing else in parity uses these
// flags. Contraction stays off (ISO C++ mode), so no FMA changes a rounding; the
// lane split does, so the two variants may differ in the last bits of a sum,
// while one machine always runs the same variant for every block and thread.
#ifndef PARITY_FAST_NS
#error "define PARITY_FAST_NS before including metrics_fast_impl.h"
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "compare/metrics_kernel.h"

namespace parity::compare_internal::PARITY_FAST_NS {
namespace {

// The type of a count of double comparisons. With AVX2 an int64 count
// vectorizes and adds in one cycle; a double count would be one chain of 3-4
// cycle additions (half of the kernel's time in the histogram). SSE2 has no
// vector form for the int64 one, so baseline keeps doubles (exact below 2^53).
#ifdef __AVX2__
using Count = int64_t;
#else
using Count = double;
#endif

bool BitsFinite(double x) {
  return (std::bit_cast<uint64_t>(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull;
}

template <typename V>
inline constexpr bool kNarrowFloat = std::is_same_v<V, float> || std::is_same_v<V, F16> ||
                                     std::is_same_v<V, BF16> || std::is_same_v<V, Bool8>;

// x * y + z. With FMA, in one instruction. Used only where x * y is exact in
// float64 (products of float32, float16 or bfloat16 values), so that the
// result is the same with FMA or without.
template <typename A, typename B>
inline double MulAdd(double x, double y, double z) {
#ifdef __FMA__
  if constexpr (kNarrowFloat<A> && kNarrowFloat<B>) return std::fma(x, y, z);
#endif
  return x * y + z;
}

}  // namespace

// Counts |d| > e[0..N-1] in one pass (N independent counts, so the loop runs
// at the throughput of its compares, not at the latency of one count chain).
template <int N>
void CountN(const double* __restrict abs_d, int64_t n, const double* e, int64_t* out) {
  double edge[N];
  Count c[N];
  for (int q = 0; q < N; ++q) edge[q] = e[q], c[q] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = abs_d[i];
    for (int q = 0; q < N; ++q) c[q] += a > edge[q] ? Count{1} : Count{0};
  }
  for (int q = 0; q < N; ++q) out[q] = static_cast<int64_t>(c[q]);
}

// Counts |d| > edge into s.above (the edges PlanEdges picks), up to four
// edges per pass over the block.
void CountEdges(const double* __restrict abs_d, int64_t n, double min_a, double min_nz, double max_a,
                BlockStats& s) {
  const EdgePlan plan = PlanEdges(min_a, min_nz, max_a);
  int64_t counted[kEdges];
  for (int j = 0; j < plan.m; j += 4) {
    switch (std::min(4, plan.m - j)) {
      case 1: CountN<1>(abs_d, n, plan.edge + j, counted + j); break;
      case 2: CountN<2>(abs_d, n, plan.edge + j, counted + j); break;
      case 3: CountN<3>(abs_d, n, plan.edge + j, counted + j); break;
      default: CountN<4>(abs_d, n, plan.edge + j, counted + j); break;
    }
  }
  AddEdgeCounts(plan, counted, n, min_a, min_nz, max_a, s);
}

// max_rel and rel_undefined of a block whose reference holds a zero: the
// guarded form of the fast loop's division (r == 0 is left out of max_rel,
// see metrics.h). Rare for most tensors, every block for ReLU outputs.
template <typename R, typename T>
void RelWithZeros(const R* __restrict r, const T* __restrict t, int64_t n, double& mrel, int64_t& undef) {
  double m = 0;
  int64_t u = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double rv = Widen(r[i]);
    const double tv = Widen(t[i]);
    const double a = std::fabs(Diff(r[i], t[i], rv, tv));
    const double ar = std::fabs(rv);
    const double q = a / (ar > 0 ? ar : 1.0);
    const double rel = ar > 0 ? q : 0.0;
    m = rel > m ? rel : m;
    u += ar == 0.0 && a > 0.0;
  }
  mrel = m;
  undef = u;
}

template <typename R, typename T>
bool FastBlock(const R* __restrict r, const T* __restrict t, int64_t n, const KernelParams& p,
               double* __restrict scratch, BlockStats& s) {
  if (n == 0) return true;
  const double shift = Widen(r[0]);
  // Two loops over the block (it stays in L1): the sums, then the extrema and
  // counts. One loop would need more accumulators than there are vector
  // registers, and spill them.
  double s_abs = 0, s_sq = 0, s_rt = 0, s_rr = 0, s_tt = 0, s_rs = 0, s_rs2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double rv = Widen(r[i]);
    const double tv = Widen(t[i]);
    const double d = Diff(r[i], t[i], rv, tv);
    const double a = std::fabs(d);
    scratch[i] = a;
    s_abs += a;
    s_sq += d * d;
    s_rt = MulAdd<R, T>(rv, tv, s_rt);
    s_rr = MulAdd<R, R>(rv, rv, s_rr);
    s_tt = MulAdd<T, T>(tv, tv, s_tt);
    const double rs = rv - shift;
    s_rs += rs;
    s_rs2 += rs * rs;
  }
  double mn = shift, mx = shift, mabs = 0, mrel = 0;
  double mina = std::numeric_limits<double>::max();   // smallest |d|
  double minnz = std::numeric_limits<double>::max();  // smallest nonzero |d|
  double minar = std::numeric_limits<double>::max();  // smallest |r|
  Count mism = 0;
  const double atol = p.atol, rtol = p.rtol;
  for (int64_t i = 0; i < n; ++i) {
    const double rv = Widen(r[i]);
    const double a = scratch[i];
    mn = rv < mn ? rv : mn;
    mx = rv > mx ? rv : mx;
    mabs = a > mabs ? a : mabs;
    mina = a < mina ? a : mina;
    const double a_nz = a > 0 ? a : std::numeric_limits<double>::max();
    minnz = a_nz < minnz ? a_nz : minnz;
    const double ar = std::fabs(rv);
    minar = ar < minar ? ar : minar;
    // Unguarded: a zero reference makes this inf or NaN, and then the block's
    // max_rel is recomputed by RelWithZeros (minar == 0 below).
    const double rel = a / ar;
    mrel = rel > mrel ? rel : mrel;
    mism += a > atol + rtol * ar ? Count{1} : Count{0};
  }
  if (!BitsFinite(s_abs)) return false;

  BlockStats b;
  b.pairs = n;
  b.sum_abs = s_abs;
  b.sum_sq = s_sq;
  b.sum_rt = s_rt;
  b.sum_rr = s_rr;
  b.sum_tt = s_tt;
  b.ref_min = mn;
  b.ref_max = mx;
  b.max_abs = mabs;
  b.max_rel = mrel;
  if (minar == 0) RelWithZeros(r, t, n, b.max_rel, b.rel_undefined);
  b.mismatches = static_cast<int64_t>(mism);
  const double nd = static_cast<double>(n);
  AddRefMoments(b, n, (shift - p.ref_shift) + s_rs / nd, std::max(0.0, s_rs2 - s_rs * s_rs / nd));
  CountEdges(scratch, n, mina, minnz, mabs, b);
  Merge(s, b);
  return true;
}

#define PARITY_FAST_BLOCK(R, T) \
  template bool FastBlock<R, T>(const R*, const T*, int64_t, const KernelParams&, double*, BlockStats&);
#define PARITY_FAST_BLOCK_FLOATS(R) \
  PARITY_FAST_BLOCK(R, float)       \
  PARITY_FAST_BLOCK(R, double)      \
  PARITY_FAST_BLOCK(R, F16)         \
  PARITY_FAST_BLOCK(R, BF16)
PARITY_FAST_BLOCK_FLOATS(float)
PARITY_FAST_BLOCK_FLOATS(double)
PARITY_FAST_BLOCK_FLOATS(F16)
PARITY_FAST_BLOCK_FLOATS(BF16)
PARITY_FAST_BLOCK(int8_t, int8_t)
PARITY_FAST_BLOCK(uint8_t, uint8_t)
PARITY_FAST_BLOCK(int16_t, int16_t)
PARITY_FAST_BLOCK(uint16_t, uint16_t)
PARITY_FAST_BLOCK(int32_t, int32_t)
PARITY_FAST_BLOCK(uint32_t, uint32_t)
PARITY_FAST_BLOCK(int64_t, int64_t)
PARITY_FAST_BLOCK(uint64_t, uint64_t)
PARITY_FAST_BLOCK(Bool8, Bool8)

}  // namespace parity::compare_internal::PARITY_FAST_NS
