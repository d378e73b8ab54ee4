// The shared cache form's checks of one step (bound_loop.cc), on caches
// [batch, ..., length, dim] whose positions lie along axis rank - 2: which
// positions a step wrote, and a copy with the positions not yet written
// set to a sentinel (the step rerun on it reads them if its logits change).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace parity {

// What the positions not yet written hold in the probe run: finite (NaN or
// inf would turn a masked score's 0 weight into NaN and fail healthy
// models), large enough that a read moves the logits.
inline constexpr double kUnwrittenSentinel = 100;

// The positions axis of a cache: rank - 2; -1 below rank 3.
int CacheAxis(const Tensor& cache);

// The positions at which each row (axis 0) of `after` differs from
// `before` (same dtype and shape), bytewise, along CacheAxis.
std::vector<std::vector<int64_t>> ChangedPositions(const Tensor& before, const Tensor& after);

// A copy of `cache` whose row b holds `value` at every position from
// `from[b]` on (float32, float16, bfloat16; else kUnsupported).
Result<Tensor> FillFrom(const Tensor& cache, const std::vector<int64_t>& from, double value);

// max |a - b| over tensors of one shape; a NaN on either side only: inf.
double MaxAbsDiff(const Tensor& a, const Tensor& b);

// "7", "7, 8", "7..12" (sorted positions).
std::string PositionList(const std::vector<int64_t>& positions);

}  // namespace parity
