// How a decode step's tokens are chosen on ONNX Runtime's logits, as the
// dump chose them on PyTorch's (python/parity/torch/search.py, same rules,
// float64): greedy, beam search over K beams, or seeded top-k/top-p sampling
// with the record's own draws (issue 51 item 5, docs/generation.md "Beam
// search and sampling"). Thread-compatible (a beam search keeps its scores).
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/generate/generation_record.h"

namespace parity {

// One step's choice: a token per new row, and (beam search) the row each
// new row continues (empty: row i continues row i).
struct TokenChoice {
  std::vector<int64_t> tokens;
  std::vector<int64_t> origins;
};

class TokenChooser {
 public:
  explicit TokenChooser(const GenerationRecord& r) : r_(r) {}
  // From `last` [rows, vocab] at step `step`. Errors: a sampling step
  // without its draws.
  Result<TokenChoice> Choose(int64_t step, const Tensor& last);

 private:
  TokenChoice Beam(const Tensor& last);
  const GenerationRecord& r_;
  std::vector<double> scores_;  // the beams' scores so far
};

// `t`'s rows (axis 0) at `origins`, in their order.
Result<Tensor> GatherRows(const Tensor& t, const std::vector<int64_t>& origins);

}  // namespace parity
