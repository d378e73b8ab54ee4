// Task-level agreement of a target with its reference (issue 25, issue 40,
// docs/quantized.md "Task agreement"): the agreement that fits the output.
//
//   classifier  top-1: a floating output of rank 1 or 2 ([classes] or
//               [batch, classes], classes >= 2), or of rank 3 named *logits*
//               ([batch, positions, vocabulary]: the next token at each
//               position); never a cache (a name starting with present or
//               past) nor a hidden state (a name containing hidden, pooler,
//               embed, state or feature). The share of rows whose top-1
//               class is the same on both sides, over every sample check
//               runs: the number behind "int8 cost 5% accuracy".
//   detector    engine/quant/detections.h: per anchor, the best class and
//               its score.
//   none        anything else (KV caches, hidden states, feature maps): no
//               task agreement is reported.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace parity {

enum class OutputTask { kNone, kClassifier, kDetector };

// Which agreement fits output `name` (above; DetectorLayoutOf for detectors).
OutputTask TaskOf(std::string_view name, const Tensor& t);

struct Top1Agreement {
  std::string output;
  int64_t rows = 0;     // samples x rows per sample
  int64_t agree = 0;    // rows whose top-1 class matches
  int64_t samples = 0;  // samples counted
  double agreement() const { return rows > 0 ? static_cast<double>(agree) / static_cast<double>(rows) : 1.0; }
  double flipped() const { return 1.0 - agreement(); }
};

// Adds one sample's classifier outputs (TaskOf; those `reference` and `test`
// both have, same shape) to `tallies` (one entry per output, added on first
// sight). Ties take the lowest index (NumPy argmax).
void AddTop1(const TensorSet& reference, const TensorSet& test, std::vector<Top1Agreement>& tallies);

// The index of the largest of n values of t from `begin`, every `stride`
// (NaN never wins over a number; ties: the lowest index).
int64_t ArgMax(const Tensor& t, int64_t begin, int64_t n, int64_t stride = 1);

}  // namespace parity
