// The small tensor edits of a decode loop (decode_loop.cc, corpus_check.cc):
// the last position's logits, the greedy token, the next step's ids, mask,
// positions and cache-branch flag, a prompt's slice. Every function copies only the small tensors
// it makes (ids, masks, positions, one row of logits), never a cache.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace parity {

// logits [batch, seq, vocab] (or [batch, vocab]) -> [batch, vocab] at the
// last position, as float32. kInvalidArgument for another rank.
Result<Tensor> LastPositionLogits(const Tensor& logits);

// The argmax of each row of [batch, vocab] (the first on ties, as torch).
std::vector<int64_t> GreedyTokens(const Tensor& last);

// [batch, 1] of `dtype` (int64 or int32) holding `tokens`.
Tensor TokenTensor(const std::vector<int64_t>& tokens, DType dtype);

// A mask [batch, n] -> [batch, n + 1] ending in ones.
Result<Tensor> AppendOnes(const Tensor& mask);

// Positions [..., n] -> [..., 1] holding the last + 1.
Result<Tensor> NextPositions(const Tensor& positions);

// The cache branch taken: `flag` all ones. kUnsupported for a flag that is
// not bool, int64, int32 or float32.
Result<Tensor> AllOnes(const Tensor& flag);

// The names of the inputs a decode step advances (a GenerationRecord's or a
// CorpusRecord's); an empty name: the model has no such input.
struct StepFeedNames {
  std::string_view token, mask, positions, cache_branch;
};

// The next step's inputs from the ones `fed`: the token input holding
// `tokens` (TokenTensor), the mask one longer (AppendOnes), the positions
// one on (NextPositions), the cache-branch flag all ones (AllOnes); every
// other input as fed, shared, not copied (a past: the caller sets its
// present). Errors: those of the edits.
Result<TensorSet> NextFeeds(const StepFeedNames& names, const TensorSet& fed, const std::vector<int64_t>& tokens);

// Elements [begin, end) along the last axis (a prompt's tokens, a mask's
// prefix, any dtype but strings).
Result<Tensor> SliceLastAxis(const Tensor& t, int64_t begin, int64_t end);

// The first `length` elements of `present` along `axis` (what its past was).
Result<Tensor> SliceAxis(const Tensor& present, int axis, int64_t length);

// `t` with what an attention mask [batch, length] drops set to zero: for
// `last_position` (the last logits [batch, ...]), the rows whose last token
// is padding; else, along the axis of `length` (a cache's positions: the
// last but one, [batch, heads, length, dim], when it is that long, else the
// first after the batch), the positions the mask holds 0 at. `t` as it is when
// the mask has no zero or does not fit it (another batch; no such axis).
// `dropped` (optional) counts the positions (or rows) dropped.
Result<Tensor> KeptByMask(const Tensor& t, const Tensor& mask, bool last_position, int64_t* dropped = nullptr);

}  // namespace parity
