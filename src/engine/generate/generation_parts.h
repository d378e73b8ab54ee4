// The parts of the generation check (generation.h) around its loop: the
// record against the model; an encoder-decoder's encoder run on ORT and
// judged against PyTorch's outputs, and which of the two a failing loop
// blames, from the loop replayed twice: fed the encoder's ORT outputs (as
// deployed) and fed PyTorch's (issue 51 item 4, docs/generation.md
// "Encoder-decoder"); the judged decode steps kept for the control-flow
// coverage.
#pragma once

#include "core/status.h"
#include "core/tensor.h"
#include "engine/generate/generation.h"
#include "engine/generate/generation_record.h"
#include "engine/generate/generation_result.h"
#include "engine/generate/decode_loop.h"
#include "engine/runner/step_session.h"
#include "ort/session.h"

namespace parity {

// Runs `o.encoder_path` on `inputs` (its session released on return), judges
// each output against PyTorch's `expected` (checks "encoder.NAME" into
// `out`) and feeds its outputs to `prompt` per the record's encoder_feeds;
// without an encoder path, PyTorch's outputs are fed (check "encoder",
// unchecked). Errors: ORT's (a failed run).
Status RunEncoder(const GenerationRecord& r, const GenerationOptions& o, const TensorSet& expected,
                  const TensorSet& inputs, TensorSet& prompt, GenerationResult& out);

// The step where a loop first departs from PyTorch's (its tokens, logits or
// cache), if any.
std::optional<int64_t> DepartingStep(const GenerationResult& g);

// Appends to `deployed.checks`, from the deployed loop (fed the encoder's ORT
// outputs, its checks "encoder.*" included) and the loop fed PyTorch's
// encoder outputs (`fed_torch`, judged alike):
//   decoder_fed_torch_encoder  PASS / FAIL: the second loop's verdict and step;
//   fault                      FAIL naming "the encoder", "the decoder" or
//                              both (only when something fails).
void SplitEncoderFault(GenerationResult& deployed, const GenerationResult& fed_torch);

// The record's names against the step model's, and its prompt against the
// dump's inputs: a record that does not fit is bad input (kInvalidArgument,
// exit 2) naming the field.
Status FitsTheModel(const GenerationRecord& r, const StepSession& session, const TensorSet& prompt,
                    const std::string& model);

// A decode step after the prefill judged against PyTorch: its inputs (a
// copy: the pasts are ORT's buffers) into o.judged_steps, up to o.keep_steps.
void KeepJudgedStep(const GenerationOptions& o, const DecodeStepOutput& s, const GenerationResult& out);

// "step 3, beam 2: PyTorch's beam 2 continues beam 1 with token 72, ORT's
// continues beam 0 with token 72" (a sampled or greedy row: "row 0: ...").
std::string WhereTheyPart(const GenerationRecord& r, const RecordedStep& torch, const DecodeStepOutput& ort);

// A beam search's or a sampling's check "search": PASS when every step's
// tokens (and beams) are PyTorch's, else FAIL with `parts_why`.
GenerationCheck SearchCheck(const GenerationRecord& r, const std::string& parts_why);

}  // namespace parity
