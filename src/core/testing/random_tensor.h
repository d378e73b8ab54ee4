// A seeded float32 tensor of standard-normal values, the input most of
// parity's tests feed a model (std::mt19937 and std::normal_distribution:
// the same values on one standard library, not across them).
#pragma once

#include <cstdint>
#include <random>

#include "core/tensor.h"

namespace parity::testing {

inline Tensor RandomTensor(const Shape& shape, uint32_t seed) {
  Tensor t(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  for (float& v : t.mutable_view<float>()) v = dist(rng);
  return t;
}

}  // namespace parity::testing
