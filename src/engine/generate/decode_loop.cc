#include "engine/generate/decode_loop.h"

#include <fmt/format.h>

#include <chrono>

#include "engine/generate/decode_tensors.h"

namespace parity {
namespace {

// The next step's inputs: the tokens, the mask one longer, the positions
// one on, the cache branch taken, each past its present (ORT's buffer as it
// is); the rest as fed.
// Beam search: every batch-first input (not the cache branch flag) and each
// present with the rows at `origins`.
Status TakeBeamRows(const GenerationRecord& r, const std::vector<int64_t>& origins, TensorSet& fed,
                    TensorSet& outputs) {
  const Tensor* ids = fed.Find(r.token_input);
  const int64_t rows = ids != nullptr && ids->rank() > 0 ? ids->shape().front() : -1;
  TensorSet taken;
  for (const auto& [name, tensor] : fed) {
    if (name == r.cache_branch_input || tensor.rank() < 1 || tensor.shape().front() != rows) {
      taken.Set(name, tensor);
      continue;
    }
    PARITY_ASSIGN_OR_RETURN(Tensor t, WithContext(GatherRows(tensor, origins), name));
    taken.Set(name, std::move(t));
  }
  for (const KvPair& kv : r.kv)
    if (const Tensor* present = outputs.Find(kv.present)) {
      PARITY_ASSIGN_OR_RETURN(Tensor t, WithContext(GatherRows(*present, origins), kv.present));
      outputs.Set(kv.present, std::move(t));
    }
  fed = std::move(taken);
  return {};
}

}  // namespace

Result<TensorSet> NextStepInputs(const GenerationRecord& r, const TensorSet& fed_in, const TensorSet& outputs_in,
                                 const std::vector<int64_t>& tokens, const std::vector<int64_t>& origins) {
  TensorSet fed = fed_in, outputs = outputs_in;
  if (!origins.empty()) PARITY_RETURN_IF_ERROR(TakeBeamRows(r, origins, fed, outputs));
  PARITY_ASSIGN_OR_RETURN(
      TensorSet next,
      NextFeeds({.token = r.token_input, .mask = r.mask_input, .positions = r.positions_input,
                 .cache_branch = r.cache_branch_input},
                fed, tokens));
  for (const KvPair& kv : r.kv) {
    const Tensor* present = outputs.Find(kv.present);
    if (!present) return InvalidArgument(fmt::format("the model has no output '{}' (the KV map's)", kv.present));
    if (next.Contains(kv.past)) next.Set(kv.past, *present);  // no copy: ORT's buffer
  }
  return next;
}

TensorSet InputsFor(const std::vector<std::string>& names, const TensorSet& all) {
  TensorSet out;
  for (const std::string& name : names)
    if (const Tensor* t = all.Find(name)) out.Set(name, *t);
  return out;
}

namespace {

Result<TensorSet> TimedRun(const ort::Session& session, const TensorSet& inputs, double* ms) {
  const auto start = std::chrono::steady_clock::now();
  auto out = session.Run(inputs, {}, ort::OutputBuffers::kBorrowed);
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

Status ReadStep(const GenerationRecord& r, const TensorSet& outputs, TokenChooser* chooser, DecodeStepOutput& step) {
  const Tensor* logits = outputs.Find(r.logits_output);
  if (!logits) return InvalidArgument(fmt::format("the model has no output '{}' (the logits)", r.logits_output));
  PARITY_ASSIGN_OR_RETURN(step.logits, WithContext(LastPositionLogits(*logits), fmt::format("step {}", step.step)));
  if (chooser != nullptr) {
    PARITY_ASSIGN_OR_RETURN(TokenChoice c, chooser->Choose(step.step, step.logits));
    step.tokens = std::move(c.tokens), step.origins = std::move(c.origins);
  } else {
    step.tokens = GreedyTokens(step.logits);
  }
  return {};
}

Status RunDecodeLoop(const ort::Session& session, const GenerationRecord& record, const TensorSet& prompt,
                     int64_t steps, const DecodeVisitor& visit, TokenChooser* chooser) {
  TensorSet fed = InputsFor(session.input_names(), prompt);
  for (int64_t k = 0; k < steps; ++k) {
    DecodeStepOutput step{.step = k};
    PARITY_ASSIGN_OR_RETURN(TensorSet outputs,
                            WithContext(TimedRun(session, fed, &step.ms), fmt::format("step {}", k)));
    PARITY_RETURN_IF_ERROR(ReadStep(record, outputs, chooser, step));
    step.fed = &fed;
    step.outputs = &outputs;
    PARITY_RETURN_IF_ERROR(visit(step));
    if (k + 1 < steps) {
      PARITY_ASSIGN_OR_RETURN(fed, NextStepInputs(record, fed, outputs, step.tokens, step.origins));
    }
  }
  return {};
}

Result<TensorSet> RunStepwise(const StepSession& session, const GenerationRecord& r, const TensorSet& prompt) {
  const Tensor* ids = prompt.Find(r.token_input);
  if (!ids || ids->rank() < 1 || ids->shape().back() < 2)
    return InvalidArgument("the prompt has fewer than two tokens: nothing to feed one at a time");
  const int64_t n = ids->shape().back();
  TensorSet all = InputsFor(session.input_names(), prompt), outputs;
  for (int64_t j = 0; j < n; ++j) {
    TensorSet fed;
    for (const auto& [name, tensor] : all) {
      Result<Tensor> t = tensor;
      if (name == r.token_input || name == r.positions_input) t = SliceLastAxis(tensor, j, j + 1);
      if (name == r.mask_input) t = SliceLastAxis(tensor, 0, tensor.shape().back() - n + j + 1);
      if (name == r.cache_branch_input && j > 0) t = AllOnes(tensor);
      if (!t) return std::unexpected(t.error());
      fed.Set(name, std::move(*t));
    }
    for (const KvPair& kv : r.kv)
      if (j > 0 && fed.Contains(kv.past) && outputs.Contains(kv.present)) fed.Set(kv.past, *outputs.Find(kv.present));
    PARITY_ASSIGN_OR_RETURN(outputs, WithContext(session.Run(fed), fmt::format("prompt token {}", j)));
  }
  const Tensor* logits = outputs.Find(r.logits_output);
  if (!logits) return InvalidArgument(fmt::format("the model has no output '{}' (the logits)", r.logits_output));
  PARITY_ASSIGN_OR_RETURN(Tensor last, LastPositionLogits(*logits));
  outputs.Set("__last_logits", std::move(last));
  return outputs;
}

}  // namespace parity
