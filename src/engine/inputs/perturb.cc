#include "engine/inputs/perturb.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

namespace parity {
namespace {

// A zero moves to +-eps x the rms of the tensor's nonzero values (1 when
// there are none): an all-zero image is exact in float32, yet the rounding
// inside the network is not; this is the size of one rounding of the values
// the first layer sees.
template <typename T>
T ZeroStep(std::span<const T> v) {
  double sum = 0;
  int64_t n = 0;
  for (T x : v)
    if (std::isfinite(x) && x != 0) sum += static_cast<double>(x) * x, ++n;
  const double rms = n > 0 ? std::sqrt(sum / static_cast<double>(n)) : 1.0;
  return static_cast<T>(std::numeric_limits<T>::epsilon() * rms);
}

template <typename T>
void Nudge(Tensor& t, std::mt19937_64& rng) {
  const T zero_step = ZeroStep<T>(t.view<T>());
  for (T& x : t.mutable_view<T>()) {
    if (!std::isfinite(x)) continue;
    if (x == 0) {
      x = (rng() & 1) ? zero_step : -zero_step;
      continue;
    }
    const T to = (rng() & 1) ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
    const T next = std::nextafter(x, to);
    if (std::isfinite(next)) x = next;
  }
}

// float16 as its bits: the neighbour is the next bit pattern away from zero
// or towards it (finite, nonzero values only).
void NudgeHalf(Tensor& t, std::mt19937_64& rng) {
  for (uint16_t& h : t.mutable_view<uint16_t>()) {
    const uint16_t magnitude = h & 0x7fff;
    if (magnitude == 0 || magnitude >= 0x7c00) continue;  // zero, inf, nan
    if (rng() & 1) {
      if (magnitude + 1 < 0x7c00) ++h;
    } else {
      --h;
    }
  }
}

}  // namespace

Sample PerturbByUlp(const Sample& sample, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Sample out{sample.name, {}};
  for (const auto& [name, t] : sample.tensors) {
    Tensor copy = t.Copy();
    if (copy.dtype() == DType::kFloat32) Nudge<float>(copy, rng);
    else if (copy.dtype() == DType::kFloat64) Nudge<double>(copy, rng);
    else if (copy.dtype() == DType::kFloat16) NudgeHalf(copy, rng);
    out.tensors.Set(name, std::move(copy));
  }
  return out;
}

Tensor SpreadOf(const Tensor& base, const Tensor& moved, const Tensor* before) {
  std::vector<float> d(static_cast<size_t>(base.size()));
  for (int64_t i = 0; i < base.size(); ++i) {
    const double v = std::fabs(moved.GetAsDouble(i) - base.GetAsDouble(i));
    d[i] = static_cast<float>(std::max(std::isfinite(v) ? v : 0.0, before ? before->GetAsDouble(i) : 0.0));
  }
  return Tensor::FromVector(DType::kFloat32, base.shape(), d);
}

}  // namespace parity
