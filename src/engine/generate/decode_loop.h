// Greedy decode of a step model on ONNX Runtime, step by step, the way a
// deployed loop runs it: each step's presents (ORT's own output buffers,
// OutputBuffers::kBorrowed) are the next step's pasts, fed back without a
// copy (a borrowed Tensor is wrapped into the next Ort::Value as it is);
// only the ids, the mask, the positions and the last logits row are made
// anew. ORT's session API here has no IO binding, so each step's outputs
// are fresh ORT buffers: a cache is never copied, but it is reallocated one
// token longer by the model's own Concat, as in a plain Python ORT loop.
//
// Thread-compatible: one loop per session at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/generate/decode_search.h"
#include "engine/generate/generation_record.h"
#include "engine/runner/step_session.h"
#include "ort/session.h"

namespace parity {

// What one step gave.
struct DecodeStepOutput {
  int64_t step = 0;
  std::vector<int64_t> tokens;  // ORT's token per row (greedy, or the chooser's)
  std::vector<int64_t> origins;  // beam search: the row each new row continues
  Tensor logits;                // the last position's [batch, vocab], float32
  const TensorSet* fed = nullptr;      // the step's inputs (its pasts)
  const TensorSet* outputs = nullptr;  // its outputs (the presents, ORT's buffers)
  double ms = 0;                       // the ORT call
};

// Called after each step; an error stops the loop and is returned.
using DecodeVisitor = std::function<Status(const DecodeStepOutput&)>;

// Runs `steps` steps from `prompt` (the step model's inputs; those the
// session does not take are left out) with the record's roles (token,
// mask, positions, KV pairs). Errors: ORT's (a step that does not run, with
// "step K: " before it), a logits output of another rank, a missing present.
// With `chooser` (decode_search.h), each step's tokens are its choice (beam
// search: the next step's inputs and pasts first take the rows the beams
// continue); without, greedy.
Status RunDecodeLoop(const ort::Session& session, const GenerationRecord& record, const TensorSet& prompt,
                     int64_t steps, const DecodeVisitor& visit, TokenChooser* chooser = nullptr);

// The prompt fed one token at a time (each output in a new ORT buffer,
// whatever the session's cache form); returns the outputs of its last token
// with its last logits as "__last_logits". kInvalidArgument for a prompt of
// fewer than two tokens.
Result<TensorSet> RunStepwise(const StepSession& session, const GenerationRecord& record, const TensorSet& prompt);

// `all` restricted to `names` (the prompt's tensors a session takes).
TensorSet InputsFor(const std::vector<std::string>& names, const TensorSet& all);

// What step `step.step` gave in `outputs`: its last position's logits (the
// record's logits output) and its tokens, the chooser's or greedy. Errors:
// no logits output, logits of another rank, the chooser's.
Status ReadStep(const GenerationRecord& r, const TensorSet& outputs, TokenChooser* chooser, DecodeStepOutput& step);

// The next step's inputs after `fed` gave `outputs` and the step chose
// `tokens` (and, beam search, `origins`): the tokens, the mask one longer,
// the positions one on, the cache branch taken, each past its present as it
// is (no copy); the rest as fed.
Result<TensorSet> NextStepInputs(const GenerationRecord& r, const TensorSet& fed, const TensorSet& outputs,
                                 const std::vector<int64_t>& tokens, const std::vector<int64_t>& origins);

}  // namespace parity
