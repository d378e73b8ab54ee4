// A seeded float32 tensor of standard-normal values, the input most of
// parity's tests feed a model (std::mt19937 and std::normal_distribution:
// the same values on one standard library, not across them), and a float32
// tensor of given values.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace parity::testing {

inline Tensor RandomTensor(const Shape& shape, uint32_t seed) {
  Tensor t(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  for (float& v : t.mutable_view<float>()) v = dist(rng);
  return t;
}

// A float32 tensor of `shape` holding `values` (row-major).
inline Tensor F32(Shape shape, const std::vector<float>& values) {
  return Tensor::FromVector(DType::kFloat32, std::move(shape), values);
}

}  // namespace parity::testing
