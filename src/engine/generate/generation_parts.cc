#include "engine/generate/generation_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "compare/judge.h"
#include "engine/runner/runner.h"

namespace parity {

Status RunEncoder(const GenerationRecord& r, const GenerationOptions& o, const TensorSet& expected,
                  const TensorSet& inputs, TensorSet& prompt, GenerationResult& out) {
  TensorSet outputs = expected;
  if (o.encoder_path.empty()) {
    out.checks.push_back({"encoder", Verdict::kUnchecked,
                          "no --encoder ENCODER.onnx: the decoder steps were fed PyTorch's encoder outputs"});
  } else {
    // The encoder's session lives for this one job (its outputs copied): the
    // step's is made after it is gone.
    PARITY_ASSIGN_OR_RETURN(outputs, WithContext(MakeSessionRunner(o.config)->Run({.model = o.encoder_path}, inputs),
                                                 o.encoder_path));
    for (const auto& [name, ref] : expected) {
      const Tensor* test = outputs.Find(name);
      if (!test) {
        out.checks.push_back({"encoder." + name, Verdict::kFail, "the encoder model has no output " + name});
        continue;
      }
      PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, ref, *test, o.policy));
      out.checks.push_back({"encoder." + name, j.passed() ? Verdict::kPass : Verdict::kFail,
                            j.passed() ? fmt::format("the encoder's {} agrees with PyTorch's (max_abs {:.3g})", name,
                                                     j.metrics.max_abs)
                                       : fmt::format("the encoder's {} against PyTorch: {}", name, j.reason)});
    }
  }
  for (const auto& [input, output] : r.encoder_feeds)
    if (const Tensor* t = outputs.Find(output)) prompt.Set(input, *t);
  return {};
}

std::optional<int64_t> DepartingStep(const GenerationResult& g) {
  std::optional<int64_t> at;
  for (const auto& s : {g.first_differing_step, g.first_failing_logits, g.first_failing_cache})
    if (s && (!at || *s < *at)) at = s;
  return at;
}

namespace {

// "departs at step 3 (its tokens differ)", or the first failing check's id.
std::string HowItFails(const GenerationResult& g) {
  const std::optional<int64_t> at = DepartingStep(g);
  if (at && at == g.first_differing_step) return fmt::format("departs at step {} (its tokens differ)", *at);
  if (at && at == g.first_failing_logits) return fmt::format("departs at step {} (its logits leave the tolerance)", *at);
  if (at) return fmt::format("departs at step {} (its cache leaves PyTorch's)", *at);
  for (const auto& c : g.checks)
    if (c.status == Verdict::kFail && !c.id.starts_with("encoder")) return fmt::format("fails {}", c.id);
  return "passes";
}

}  // namespace

void SplitEncoderFault(GenerationResult& deployed, const GenerationResult& fed_torch) {
  std::string encoder_failed;
  for (const auto& c : deployed.checks)
    if (c.id.starts_with("encoder.") && c.status == Verdict::kFail && encoder_failed.empty()) encoder_failed = c.id;
  const bool decoder_fails = fed_torch.verdict == Verdict::kFail;
  const std::string torch_how = HowItFails(fed_torch);
  deployed.checks.push_back(
      {"decoder_fed_torch_encoder", decoder_fails ? Verdict::kFail : Verdict::kPass,
       decoder_fails ? fmt::format("fed PyTorch's own encoder outputs, the decoder still {}", torch_how)
                     : "fed PyTorch's own encoder outputs, the decoder gives PyTorch's tokens, logits and caches at "
                       "every step"});
  const bool deployed_fails = deployed.verdict == Verdict::kFail || !encoder_failed.empty();
  if (!deployed_fails && !decoder_fails) return;
  std::string blame;
  if (!encoder_failed.empty() && decoder_fails)
    blame = fmt::format("the encoder and the decoder: the encoder's outputs leave PyTorch's ({}), and fed PyTorch's "
                        "encoder outputs the decoder still {}", encoder_failed, torch_how);
  else if (!encoder_failed.empty())
    blame = fmt::format("the encoder: its outputs leave PyTorch's ({}); fed PyTorch's encoder outputs the decoder "
                        "passes every step, fed the encoder's ORT outputs it {}", encoder_failed, HowItFails(deployed));
  else if (decoder_fails)
    blame = fmt::format("the decoder: the encoder's outputs agree with PyTorch's, and fed PyTorch's own encoder "
                        "outputs the decoder still {}", torch_how);
  else
    blame = fmt::format("the encoder: its outputs are within the tolerance, yet fed them the decoder {} where fed "
                        "PyTorch's it passes (the decoder amplifies the encoder's error)", HowItFails(deployed));
  deployed.checks.push_back({"fault", Verdict::kFail, blame});
}

Status FitsTheModel(const GenerationRecord& r, const StepSession& session, const TensorSet& prompt,
                    const std::string& model) {
  const auto inputs = session.input_names(), outputs = session.output_names();
  const auto has = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  const auto misfit = [&](const std::string& field, const std::string& name, const char* what) {
    return InvalidArgument(fmt::format("manifest.json: generation.{}: '{}' is no {} of {}: the record was made from "
                                       "another model", field, name, what, model));
  };
  if (!has(outputs, r.logits_output)) return misfit("logits_output", r.logits_output, "output");
  if (!has(inputs, r.token_input)) return misfit("token_input", r.token_input, "input");
  if (!r.mask_input.empty() && !has(inputs, r.mask_input)) return misfit("mask_input", r.mask_input, "input");
  if (!r.positions_input.empty() && !has(inputs, r.positions_input))
    return misfit("positions_input", r.positions_input, "input");
  if (!r.cache_branch_input.empty() && !has(inputs, r.cache_branch_input))
    return misfit("cache_branch_input", r.cache_branch_input, "input");
  for (size_t i = 0; i < r.kv.size(); ++i) {
    if (!has(outputs, r.kv[i].present)) return misfit(fmt::format("kv_map[{}].present", i), r.kv[i].present, "output");
    if (!has(inputs, r.kv[i].past)) return misfit(fmt::format("kv_map[{}].past", i), r.kv[i].past, "input");
  }
  const Tensor* ids = prompt.Find(r.token_input);
  if (ids == nullptr)
    return InvalidArgument(fmt::format("manifest.json: generation.token_input: the dump has no input '{}'",
                                       r.token_input));
  if (ids->rank() < 1 || ids->shape().front() != r.batch || ids->shape().back() != r.prompt_length)
    return InvalidArgument(fmt::format("manifest.json: generation.prompt_length: the dump's '{}' is {}, not a prompt "
                                       "of {} tokens in a batch of {}", r.token_input, ShapeToString(ids->shape()),
                                       r.prompt_length, r.batch));
  return {};
}

void KeepJudgedStep(const GenerationOptions& o, const DecodeStepOutput& s, const GenerationResult& out) {
  if (o.judged_steps == nullptr || s.step == 0 || o.judged_steps->size() >= o.keep_steps || out.steps.empty() ||
      out.steps.back().step != s.step || !out.steps.back().judged)
    return;
  TensorSet copy;
  for (const auto& [name, t] : *s.fed) copy.Set(name, t.Copy());
  o.judged_steps->emplace_back(fmt::format("generation:step{}", s.step), std::move(copy));
}

std::string WhereTheyPart(const GenerationRecord& r, const RecordedStep& torch, const DecodeStepOutput& ort) {
  const bool beams = !torch.origins.empty();
  const size_t n = std::max(torch.tokens.size(), ort.tokens.size());
  for (size_t b = 0; b < n; ++b) {
    const auto at = [b](const std::vector<int64_t>& v) { return b < v.size() ? v[b] : int64_t{-1}; };
    if (at(torch.tokens) == at(ort.tokens) && (!beams || at(torch.origins) == at(ort.origins))) continue;
    if (!beams)
      return fmt::format("step {}, row {}: PyTorch's token {}, ORT's {}", torch.step, b, at(torch.tokens),
                         at(ort.tokens));
    return fmt::format("step {}, beam {}: PyTorch's beam {} continues beam {} with token {}, ORT's continues beam {} "
                       "with token {}", torch.step, b, b, at(torch.origins), at(torch.tokens), at(ort.origins),
                       at(ort.tokens));
  }
  return fmt::format("step {}", torch.step);
}

GenerationCheck SearchCheck(const GenerationRecord& r, const std::string& parts_why) {
  const RecordedSearch& s = r.search;
  const std::string what =
      s.kind == "beam" ? fmt::format("beam search ({} beams)", s.beams)
                       : fmt::format("sampling (top_k {}, top_p {:g}, temperature {:g}; PyTorch's draws)", s.top_k,
                                     s.top_p, s.temperature);
  if (!parts_why.empty())
    return {"search", Verdict::kFail, fmt::format("{}: the sequences part at {}", what, parts_why)};
  return {"search", Verdict::kPass, fmt::format("{}: every step gives PyTorch's tokens{}", what,
                                                s.kind == "beam" ? " and beams" : "")};
}

}  // namespace parity
