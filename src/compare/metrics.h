// Per-tensor comparison metrics (docs/contract.md (""Reports"")), all from one pass over
// the two tensors, accumulated in float64.
//
// Definitions (r = reference element, t = test element, both widened to
// float64; d = t - r; a "finite pair" has both r and t finite):
//   count          every element.
//   finite_pairs   the pairs the error statistics run over.
//   max_abs        max |d| over finite pairs (0 when there are none);
//                  max_abs_index / max_abs_flat_index name the FIRST element
//                  (lowest C-order index) attaining it, ref_at_max and
//                  test_at_max its values. Index empty / -1 without finite pairs.
//   max_rel        max |d| / |r| over finite pairs with r != 0. Pairs with
//                  r == 0 are left out (their relative error is undefined);
//                  those with r == 0 and t != 0 are counted in
//                  `rel_undefined`, so a zero reference never hides silently.
//                  0 when no pair qualifies.
//   mean_abs       sum |d| / finite_pairs (0 without finite pairs).
//   rmse           sqrt(sum d^2 / finite_pairs) (0 without finite pairs).
//   cosine         sum(r t) / sqrt(sum r^2 * sum t^2) over finite pairs; 1 when
//                  both vectors are zero (or there are no finite pairs and the
//                  non-finite elements agree), 0 when exactly one is zero;
//                  NaN (undefined) when there is no finite pair and a
//                  non-finite element differs (an all-NaN output).
//   snr_db         10 log10(sum r^2 / sum d^2) over finite pairs; +inf when
//                  sum d^2 == 0 (identical, including both zero), -inf when
//                  sum r^2 == 0 but d is not; NaN when cosine is.
//   mismatches     elements where NumPy's isclose(t, r, rtol, atol,
//                  equal_nan=True) is false, computed in float64:
//                  |d| > atol + rtol*|r| for finite pairs; a NaN on one side
//                  only; an infinity against anything but the same infinity.
//   nan_ref/test, inf_ref/test   counts per side.
//   nan_mismatch   NaN on exactly one side.  nan_equal: NaN on both sides.
//   inf_equal      the same infinity on both sides (equal, not a mismatch).
//   inf_mismatch   an infinity against anything else that is not NaN.
//   ref_min/max/mean/std   over the finite reference elements (population
//                  std, ddof=0); 0 when there are none. ref_finite counts them.
//   histogram      |d| over finite pairs by decade: bin 0 holds |d| == 0,
//                  bin 1 (0, 1e-12], bin k (1e-(14-k), 1e-(13-k)] for k=2..15
//                  (the last is (10, 100]), bin 16 > 100. The exact cut
//                  above 10^k is kHistogramCuts[k]: the float64 nearest 10^k
//                  with its low 32 bits set to one (at most 2^-20, about 1e-6,
//                  relative above it), so that a comparison of the upper 32
//                  bits of |d| decides a bin exactly; the literal itself and
//                  every value down to the next decade fall in the bin below.
//
// Integers compare exactly (differences of 64-bit integers are formed in 128
// bits, so a nonzero difference is never 0); bools compare as 0/1, so |d| is
// their xor. Strings: only count and mismatches (elements not equal).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace parity {

inline constexpr int kHistogramBins = 17;
// Upper edges of bins 0..15 as written in reports; bin 16 is everything above
// the last edge.
inline constexpr std::array<double, kHistogramBins - 1> kHistogramEdges = {
    0.0,  1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6,
    1e-5, 1e-4,  1e-3,  1e-2,  1e-1, 1e0,  1e1,  1e2};

// The values the bins are cut at: 0, then each decade's float64 with its low
// 32 bits set, so that for |d| >= 0, |d| > cut exactly when the upper 32 bits
// of |d| (as an integer) exceed those of the cut.
inline constexpr std::array<double, kHistogramBins - 1> kHistogramCuts = [] {
  std::array<double, kHistogramBins - 1> c{};
  for (size_t k = 1; k < c.size(); ++k)
    c[k] = std::bit_cast<double>(std::bit_cast<uint64_t>(kHistogramEdges[k]) | uint64_t{0xffffffff});
  return c;
}();

struct TensorMetrics {
  int64_t count = 0;
  int64_t finite_pairs = 0;

  double max_abs = 0;
  std::vector<int64_t> max_abs_index;  // coordinates; empty for 0-d or none
  int64_t max_abs_flat_index = -1;
  double ref_at_max = 0;
  double test_at_max = 0;

  double max_rel = 0;
  int64_t rel_undefined = 0;  // finite pairs with r == 0 and t != 0
  double mean_abs = 0;
  double rmse = 0;
  double cosine = 1;
  double snr_db = 0;

  double atol = 0;  // the tolerance `mismatches` was counted with
  double rtol = 0;
  int64_t mismatches = 0;

  int64_t nan_ref = 0, nan_test = 0, inf_ref = 0, inf_test = 0;
  int64_t nan_mismatch = 0, nan_equal = 0, inf_equal = 0, inf_mismatch = 0;

  int64_t ref_finite = 0;
  double ref_min = 0, ref_max = 0, ref_mean = 0, ref_std = 0;

  std::array<int64_t, kHistogramBins> histogram{};
};

// The tolerance `mismatches` is counted with.
struct MismatchBand {
  double atol = 0;
  double rtol = 0;
};

struct MetricsOptions {
  double atol = 0;
  double rtol = 0;
  // When set, atol and rtol above are ignored: the band is chosen from the
  // reference's statistics (count, ref_finite, ref_min/max/mean/std; the
  // other fields unset) of this same pass, so that a tolerance relative to the
  // reference's scale costs no pass of its own. Called once. Floating pairs
  // count everything else with an infinite band and then recount the
  // mismatches of the chunks (32Ki elements) whose max |d| exceeds the chosen
  // atol, with the same kernels: the counts equal those of a run given the
  // band from the start. Other pairs take the statistics from a pass over the
  // reference first.
  std::function<MismatchBand(const TensorMetrics& reference_statistics)> band_from_reference;
  // 0: choose (threads only above kParallelThreshold elements); 1: this
  // thread only; n: at most n threads. Results are bitwise identical for any
  // thread count (partial results are merged in block order).
  int threads = 0;
};

inline constexpr int64_t kParallelThreshold = int64_t{1} << 20;

// Computes every metric of `test` against `ref` in one pass.
// Preconditions checked (invalid argument on failure): equal element counts;
// both numeric/bool, or both strings. Shapes may differ only if the caller
// has decided so (coordinates follow ref's shape). Different numeric dtypes
// are widened on the fly. Thread-safe (reads only).
Result<TensorMetrics> ComputeMetrics(const Tensor& ref, const Tensor& test, const MetricsOptions& options);

// Unravels a C-order flat index into coordinates of `shape`.
std::vector<int64_t> UnravelIndex(int64_t flat, const Shape& shape);

}  // namespace parity
