// INTERNAL to src/engine/sample_gen*: the resolved plan of one input and the
// value filling of one tensor. Portable determinism: the stream is
// splitmix64 and the normal draw is Box-Muller, not the standard library's
// implementation-defined distributions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "engine/inputs/sample_gen.h"

namespace parity::sample_internal {

struct Axis {
  int64_t fixed = -1;  // >= 0 when the size is fixed
  std::string symbol;  // non-empty when dynamic
};

struct InputPlan {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<Axis> axes;
  int64_t vocab = 0;  // > 0 when the input feeds a Gather as indices
  // An integer input that sets an iteration count or a size (a Loop's trip
  // count, a Range's bounds, a shape): typical values in [1, 8], never
  // above kCountMax (kDtypeMax leaves it typical).
  bool count = false;
  std::optional<ValueRange> range;
};

enum class Mode {
  kTypical,  // see sample_gen.h; times `scale` for floats
  kZeros,
  kDtypeMax,    // every element at the dtype's largest value (counts: typical)
  kCountMax,    // counts at their modest max (CountMax); other inputs typical
  kNaN,         // typical, a few elements NaN
  kInf,         // typical, a few elements +Inf / -Inf alternately
  kOutOfRange,  // typical ids, a few at vocab, vocab + 1, ...
};

// The largest value generated for a count: kCountMax for a count of up to
// three elements; smaller for more, so that a shape's product stays under
// 2^20 elements.
inline constexpr int64_t kCountMax = 64;
int64_t CountMax(const InputPlan& in, int64_t elements);

// The stream seed of one input of one sample.
uint64_t StreamSeed(uint64_t seed, std::string_view sample, std::string_view input);

// Fills every element of `t` (dtype and shape already set).
void Fill(Tensor& t, const InputPlan& in, Mode mode, double scale, uint64_t stream_seed);

}  // namespace parity::sample_internal
