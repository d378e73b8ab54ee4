// Task-level agreement of a derived model with its float model (issue 25,
// docs/quantized.md): for a classifier-like output (floating, a class axis:
// the last dimension, of length >= 2), the share of rows (samples, or the
// rows of a batch) whose top-1 class is the same on both sides, over every
// sample check runs. The number behind "int8 cost 5% accuracy".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

struct Top1Agreement {
  std::string output;
  int64_t rows = 0;     // samples x rows per sample
  int64_t agree = 0;    // rows whose top-1 class matches
  int64_t samples = 0;  // samples counted
  double agreement() const { return rows > 0 ? static_cast<double>(agree) / static_cast<double>(rows) : 1.0; }
  double flipped() const { return 1.0 - agreement(); }
};

// Whether `t` has a class axis: floating, rank >= 1, last dimension >= 2.
bool IsClassifierLike(const Tensor& t);

// Adds one sample's classifier-like outputs (those `reference` and `test`
// both have, same shape) to `tallies` (one entry per output, added on first
// sight). Ties take the lowest index (NumPy argmax).
void AddTop1(const TensorSet& reference, const TensorSet& test, std::vector<Top1Agreement>& tallies);

}  // namespace parity
