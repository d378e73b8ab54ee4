// The vectorized fast path of ComputeMetrics (see metrics_kernel.h).
//
// Compiled with -O3 -fno-trapping-math -fno-signed-zeros -fassociative-math
// -ffinite-math-only (CMakeLists.txt): the loop below assumes every value is
// finite, and lets GCC split each sum, max and count into vector lanes. The
// finiteness of the inputs is checked on the bits of sum |d| (a check the
// finite-math flags cannot fold away); a block that fails is redone by
// SlowBlock with IEEE semantics. Nothing else in parity uses these flags.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "compare/metrics_kernel.h"

namespace parity::compare_internal {
namespace {

bool BitsFinite(double x) {
  return (std::bit_cast<uint64_t>(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull;
}

}  // namespace

void CountEdges(const double* __restrict abs_d, int64_t n, double min_a, double max_a, BlockStats& s) {
  for (int k = 0; k < kEdges; ++k) {
    const double edge = kHistogramEdges[k];
    if (min_a > edge) {
      s.above[k] += n;
    } else if (max_a > edge) {
      double c = 0;  // a double count vectorizes, see FastBlock
      for (int64_t i = 0; i < n; ++i) c += abs_d[i] > edge ? 1.0 : 0.0;
      s.above[k] += static_cast<int64_t>(c);
    }
  }
}

template <typename R, typename T>
bool FastBlock(const R* __restrict r, const T* __restrict t, int64_t n, const KernelParams& p,
               double* __restrict scratch, BlockStats& s) {
  if (n == 0) return true;
  const double shift = Widen(r[0]);
  double s_abs = 0, s_sq = 0, s_rt = 0, s_rr = 0, s_tt = 0, s_rs = 0, s_rs2 = 0;
  double mn = shift, mx = shift, mabs = 0, mina = std::numeric_limits<double>::max(), mrel = 0;
  // Counts are kept as doubles (exact below 2^53): GCC does not vectorize an
  // int64 count of double comparisons together with double reductions.
  double mism = 0, undef = 0;
  const double atol = p.atol, rtol = p.rtol;
  for (int64_t i = 0; i < n; ++i) {
    const double rv = Widen(r[i]);
    const double tv = Widen(t[i]);
    const double d = Diff(r[i], t[i], rv, tv);
    const double a = std::fabs(d);
    scratch[i] = a;
    s_abs += a;
    s_sq += d * d;
    s_rt += rv * tv;
    s_rr += rv * rv;
    s_tt += tv * tv;
    const double rs = rv - shift;
    s_rs += rs;
    s_rs2 += rs * rs;
    mn = rv < mn ? rv : mn;
    mx = rv > mx ? rv : mx;
    mabs = a > mabs ? a : mabs;
    mina = a < mina ? a : mina;
    const double ar = std::fabs(rv);
    // A safe denominator, then a select: no branch, no division by zero
    // (r == 0 is left out of max_rel, see metrics.h).
    const double q = a / (ar > 0 ? ar : 1.0);
    const double rel = ar > 0 ? q : 0.0;
    mrel = rel > mrel ? rel : mrel;
    undef += (ar == 0.0 && a > 0.0) ? 1.0 : 0.0;
    mism += (a > atol + rtol * ar) ? 1.0 : 0.0;
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
  b.mismatches = static_cast<int64_t>(mism);
  b.rel_undefined = static_cast<int64_t>(undef);
  const double nd = static_cast<double>(n);
  AddRefMoments(b, n, (shift - p.ref_shift) + s_rs / nd, std::max(0.0, s_rs2 - s_rs * s_rs / nd));
  CountEdges(scratch, n, mina, mabs, b);
  Merge(s, b);
  return true;
}

#define PARITY_FAST_BLOCK(R, T) \
  template bool FastBlock<R, T>(const R*, const T*, int64_t, const KernelParams&, double*, BlockStats&);
#define PARITY_FAST_BLOCK_FLOATS(R) \
  PARITY_FAST_BLOCK(R, float)        \
  PARITY_FAST_BLOCK(R, double)       \
  PARITY_FAST_BLOCK(R, F16)          \
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

}  // namespace parity::compare_internal
