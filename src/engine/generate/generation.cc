#include "engine/generate/generation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "compare/band.h"
#include "compare/judge.h"
#include "engine/generate/bound_loop.h"
#include "engine/generate/decode_loop.h"
#include "engine/generate/decode_tensors.h"
#include "engine/generate/generation_parts.h"
#include "ort/session.h"

namespace parity {
namespace {

// Judges one tensor against PyTorch's; `fp64`, when given, calibrates the
// band as the dump's float64 outputs do (CalibrateOnTorchFp64).
Result<JudgedTensor> JudgeAgainst(const std::string& name, const Tensor& ref, const Tensor& test,
                                  const TolerancePolicy& policy, const Tensor* fp64 = nullptr) {
  TolerancePolicy p = policy;
  std::optional<TensorMetrics> noise;
  if (fp64 && p.mode == ToleranceMode::kScaled && !p.global.atol && fp64->shape() == ref.shape()) {
    PARITY_ASSIGN_OR_RETURN(noise, ComputeMetrics(ref, *fp64, {}));
    p.mode = ToleranceMode::kCalibrated;
  }
  return JudgeTensor(name, ref, test, p, {.noise = noise ? &*noise : nullptr, .noise_tensor = fp64});
}

double Band(const JudgedTensor& j) {
  return Band(j.tolerance.tolerance, j.tolerance.ref_absmax);
}

// Whether each present begins with the past fed to it, bitwise.
Verdict StartsWithPast(const GenerationRecord& r, const DecodeStepOutput& s, std::string* why) {
  for (const KvPair& kv : r.kv) {
    const Tensor* past = s.fed->Find(kv.past);
    const Tensor* present = s.outputs->Find(kv.present);
    if (!past || !present || past->rank() != present->rank()) continue;
    int axis = -1;
    for (int a = 0; a < past->rank() && axis < 0; ++a)
      if (past->shape()[a] != present->shape()[a]) axis = a;
    if (axis < 0 || past->size() == 0) continue;
    auto head = SliceAxis(*present, axis, past->shape()[axis]);
    if (!head || !head->BitwiseEquals(*past)) {
      *why = fmt::format("step {}: {} does not start with the {} fed to it", s.step, kv.present, kv.past);
      return Verdict::kFail;
    }
  }
  return Verdict::kPass;
}

// "step 3: present_key_0 is [1, 2, 7, 16] where PyTorch's is [1, 2, 8, 16]:
// the cache did not grow with the step's 1 token (past [1, 2, 7, 16])".
std::string CacheShapeWhy(const DecodeStepOutput& s, const std::string& present, const Tensor& torch,
                          const Tensor& ort, const Tensor* past, int64_t fed_tokens) {
  std::string what;
  if (past != nullptr && past->shape() == ort.shape())
    what = fmt::format(": the cache did not grow with the step's {} token(s) (past {})", fed_tokens,
                       ShapeToString(past->shape()));
  return fmt::format("step {}: {} is {} where PyTorch's is {}{}", s.step, present, ShapeToString(ort.shape()),
                     ShapeToString(torch.shape()), what);
}

class StepJudge {
 public:
  StepJudge(const TorchDump& dump, const GenerationRecord& r, const TolerancePolicy& policy, GenerationResult& out)
      : dump_(dump), r_(r), policy_(policy), out_(out) {}

  Status Step(const DecodeStepOutput& s) {
    Status done = StepOrBadInput(s);
    if (!done && !bad_input_) bad_input_ = done.error();
    return done;
  }

  // A dump file the record names that cannot be read, or one that does not
  // fit the model: the record is bad input (exit 2), not a failed run.
  const std::optional<Error>& bad_input() const { return bad_input_; }

  const std::string& starts_why() const { return starts_why_; }
  // Where ORT's sequences first part from PyTorch's (step and beam); empty: never.
  const std::string& parts_why() const { return parts_why_; }
  // The first present whose shape is not PyTorch's at its step; empty: none.
  const std::string& shape_why() const { return shape_why_; }
  TensorSet prefill;  // ORT's prefill outputs, with "__last_logits"

 private:
  // Only the dump's own errors return an error here (ORT's came before).
  Status StepOrBadInput(const DecodeStepOutput& s) {
    if (s.step == 0) KeepPrefill(s);
    if (s.step >= static_cast<int64_t>(r_.steps.size())) return {};
    const RecordedStep& rec = r_.steps[s.step];
    GenerationStep g{.step = s.step, .kind = s.step == 0 ? "prefill" : "decode", .torch_tokens = rec.tokens,
                     .ort_tokens = s.tokens, .ms = s.ms};
    g.tokens_agree = g.torch_tokens == g.ort_tokens && (rec.origins.empty() || rec.origins == s.origins);
    if (!g.tokens_agree && parts_why_.empty()) parts_why_ = WhereTheyPart(r_, rec, s);
    g.judged = agreed_so_far_;
    std::string why;
    g.starts_with_past = StartsWithPast(r_, s, &why);
    if (g.starts_with_past == Verdict::kFail && starts_why_.empty()) starts_why_ = why;
    if (g.judged) PARITY_RETURN_IF_ERROR(JudgeStep(rec, s, g));
    agreed_so_far_ = agreed_so_far_ && g.tokens_agree;
    out_.steps.push_back(std::move(g));
    return {};
  }

  void KeepPrefill(const DecodeStepOutput& s) {
    for (const KvPair& kv : r_.kv)
      if (const Tensor* t = s.outputs->Find(kv.present)) prefill.Set(kv.present, t->Copy());  // shared: written on
    prefill.Set("__last_logits", s.logits);
  }

  Status JudgeStep(const RecordedStep& rec, const DecodeStepOutput& s, GenerationStep& g) {
    const std::string key = fmt::format("manifest.json: generation.steps[{}]", s.step);
    PARITY_ASSIGN_OR_RETURN(Tensor ref, WithContext(LoadRecordedTensor(dump_, rec.logits), key + ".logits"));
    // PyTorch's last logits are [batch, vocab] as ORT's: another shape is a
    // record of another model (or a malformed one), not a difference.
    if (ref.shape() != s.logits.shape())
      return InvalidArgument(fmt::format("manifest.json: generation.steps[{}].logits: '{}' holds {} {}, the model's "
                                         "last logits are {}", s.step, rec.logits, DTypeName(ref.dtype()),
                                         ShapeToString(ref.shape()), ShapeToString(s.logits.shape())));
    std::optional<Tensor> fp64;
    if (!rec.logits_fp64.empty()) {
      PARITY_ASSIGN_OR_RETURN(fp64, WithContext(LoadRecordedTensor(dump_, rec.logits_fp64), key + ".logits_fp64"));
      if (fp64->shape() != ref.shape())
        return InvalidArgument(fmt::format("manifest.json: generation.steps[{}].logits_fp64: '{}' holds {}, its "
                                           "logits {}", s.step, rec.logits_fp64, ShapeToString(fp64->shape()),
                                           ShapeToString(ref.shape())));
    }
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeAgainst(fmt::format("logits (step {})", s.step), ref, s.logits,
                                                         policy_, fp64 ? &*fp64 : nullptr));
    g.logits = j.passed() ? Verdict::kPass : Verdict::kFail;
    g.logits_max_abs = j.metrics.max_abs;
    g.logits_band = Band(j);
    g.logits_score = j.score;
    g.logits_why = j.passed() ? j.tolerance.Why() : j.reason;
    bool shape_failed = false;
    for (const RecordedPresent& p : rec.presents) {
      const Tensor* test = s.outputs->Find(p.name);
      if (p.file.empty() || !test) continue;
      PARITY_ASSIGN_OR_RETURN(Tensor pref, WithContext(LoadRecordedTensor(dump_, p.file), key + ".presents." + p.name));
      if (!p.shape.empty() && pref.shape() != p.shape)
        return InvalidArgument(fmt::format("manifest.json: generation.steps[{}].presents.{}: '{}' holds {}, the "
                                           "record says {}", s.step, p.name, p.file, ShapeToString(pref.shape()),
                                           ShapeToString(p.shape)));
      if (pref.shape() != test->shape()) {
        // A cache that stops growing (or grows wrong) is a shape, not a score:
        // the step's worst whatever the other presents' scores.
        if (!shape_failed) g.cache_worst = p.name, g.cache_max_abs = 0, g.cache_score = 0;
        shape_failed = true;
        g.cache = Verdict::kFail;
        if (shape_why_.empty()) shape_why_ = CacheShapeWhy(s, p.name, pref, *test, PastOf(p.name, s), FedTokens(s));
        continue;
      }
      PARITY_ASSIGN_OR_RETURN(JudgedTensor pj, JudgeAgainst(p.name, pref, *test, policy_));
      if (!shape_failed && (g.cache == Verdict::kUnchecked || pj.score > g.cache_score)) {
        g.cache_worst = p.name, g.cache_max_abs = pj.metrics.max_abs, g.cache_score = pj.score;
      }
      if (!pj.passed()) g.cache = Verdict::kFail;
      else if (g.cache == Verdict::kUnchecked) g.cache = Verdict::kPass;
    }
    return {};
  }

  // The past fed with the cache whose present is `present`; null: none.
  const Tensor* PastOf(const std::string& present, const DecodeStepOutput& s) const {
    for (const KvPair& kv : r_.kv)
      if (kv.present == present) return s.fed->Find(kv.past);
    return nullptr;
  }
  // The tokens the step fed (its ids' last axis).
  int64_t FedTokens(const DecodeStepOutput& s) const {
    const Tensor* ids = s.fed->Find(r_.token_input);
    return ids != nullptr && ids->rank() > 0 ? ids->shape().back() : 0;
  }

  const TorchDump& dump_;
  const GenerationRecord& r_;
  const TolerancePolicy& policy_;
  GenerationResult& out_;
  bool agreed_so_far_ = true;
  std::string starts_why_;
  std::string shape_why_;
  std::string parts_why_;
  std::optional<Error> bad_input_;
};

// The worst of `names` in `b` against `a` (same names), as one check; with
// the prompt's `mask`, judged only where it keeps the tokens (KeptByMask: a
// padded token's cache row is whatever the model made of nothing, and
// differs between the prompt at once and one token at a time).
GenerationCheck CompareStates(std::string id, std::string what, const TensorSet& a, const TensorSet& b,
                              const TolerancePolicy& policy, const Tensor* mask = nullptr) {
  double worst = 0;
  std::string worst_name, failure;
  int64_t padded = 0, rows = 0;
  for (const auto& [name, ref_in] : a) {
    const Tensor* test_in = b.Find(name);
    if (!test_in) continue;
    const bool logits = name == "__last_logits";
    Result<Tensor> ref = ref_in, test = *test_in;
    int64_t dropped = 0;
    if (mask != nullptr) ref = KeptByMask(ref_in, *mask, logits, &dropped), test = KeptByMask(*test_in, *mask, logits);
    if (!ref || !test) return {std::move(id), Verdict::kFail, (!ref ? ref : test).error().message()};
    (logits ? rows : padded) = std::max(logits ? rows : padded, dropped);
    auto j = JudgeAgainst(logits ? "the last logits" : name, *ref, *test, policy);
    if (!j) return {std::move(id), Verdict::kFail, j.error().message()};
    if (j->score >= worst) worst = j->score, worst_name = logits ? "logits" : name;
    if (!j->passed() && failure.empty()) failure = fmt::format("{}: {}", worst_name, j->reason);
  }
  if (padded > 0 || rows > 0)
    what += fmt::format(" (where the attention mask keeps the tokens: {} padded position(s) of the caches and {} "
                        "row(s) whose last token is padding left out)", padded, rows);
  if (!failure.empty()) return {std::move(id), Verdict::kFail, fmt::format("{} differ: {}", what, failure)};
  return {std::move(id), Verdict::kPass, fmt::format("{} agree (worst {}: score {:.3g})", what, worst_name, worst)};
}

// PyTorch's own prompt at once vs one token at a time, from the dump.
Result<GenerationCheck> TorchStepwise(const TorchDump& dump, const GenerationRecord& r, const TolerancePolicy& policy,
                                      const Tensor* mask) {
  TensorSet at_once, stepwise;
  const RecordedStep& first = r.steps.front();
  PARITY_ASSIGN_OR_RETURN(Tensor a, WithContext(LoadRecordedTensor(dump, first.logits),
                                                "manifest.json: generation.steps[0].logits"));
  PARITY_ASSIGN_OR_RETURN(Tensor b, WithContext(LoadRecordedTensor(dump, r.stepwise->logits),
                                                "manifest.json: generation.stepwise.logits"));
  at_once.Set("__last_logits", std::move(a));
  stepwise.Set("__last_logits", std::move(b));
  for (const RecordedPresent& p : first.presents)
    for (const RecordedPresent& q : r.stepwise->presents)
      if (p.name == q.name && !p.file.empty() && !q.file.empty()) {
        PARITY_ASSIGN_OR_RETURN(Tensor x, WithContext(LoadRecordedTensor(dump, p.file),
                                                      "manifest.json: generation.steps[0].presents." + p.name));
        PARITY_ASSIGN_OR_RETURN(Tensor y, WithContext(LoadRecordedTensor(dump, q.file),
                                                      "manifest.json: generation.stepwise.presents." + q.name));
        at_once.Set(p.name, std::move(x));
        stepwise.Set(q.name, std::move(y));
      }
  return CompareStates("torch_prefill_equals_stepwise",
                       "PyTorch's prompt at once and one token at a time: the last logits and caches", at_once,
                       stepwise, policy, mask);
}

}  // namespace

namespace {

void Summarize(GenerationResult& g, const std::string& starts_why, const std::string& shape_why) {
  const GenerationStep* first_judged = nullptr;
  const GenerationStep* last_judged = nullptr;
  for (const GenerationStep& s : g.steps) {
    if (s.tokens_agree) ++g.tokens_agreeing;
    if (!s.tokens_agree && !g.first_differing_step) g.first_differing_step = s.step;
    if (s.logits == Verdict::kFail && !g.first_failing_logits) g.first_failing_logits = s.step;
    if (s.cache == Verdict::kFail && !g.first_failing_cache) g.first_failing_cache = s.step;
    if (s.judged && s.logits != Verdict::kUnchecked) {
      if (!first_judged) first_judged = &s;
      last_judged = &s;
    }
  }
  if (first_judged && last_judged != first_judged)
    g.error_growth = first_judged->logits_max_abs > 0 ? last_judged->logits_max_abs / first_judged->logits_max_abs
                                                      : (last_judged->logits_max_abs > 0 ? INFINITY : 1);
  bool starts = true, cache = true;
  for (const GenerationStep& s : g.steps) {
    starts = starts && s.starts_with_past != Verdict::kFail;
    cache = cache && s.cache != Verdict::kFail;
  }
  g.checks.insert(g.checks.begin(),
                  {"present_starts_with_past", starts ? Verdict::kPass : Verdict::kFail,
                   starts ? "every present starts with the past fed to it (bitwise), at every step" : starts_why});
  if (!shape_why.empty()) g.checks.insert(g.checks.begin() + 1, {"present_shape", Verdict::kFail, shape_why});
  g.verdict = Verdict::kPass;
  if (g.first_differing_step || g.first_failing_logits || !cache ||
      static_cast<int64_t>(g.steps.size()) < g.length)
    g.verdict = Verdict::kFail;
  for (const auto& c : g.checks)
    if (c.status == Verdict::kFail) g.verdict = Verdict::kFail;
}

// Keeps at most `max` steps in the result (its reports list each): the
// first and the last, and the first that departs; the verdict and the
// summary were computed on all of them. `steps_not_listed` says how many went.
void ListAtMost(GenerationResult& g, size_t max) {
  if (g.steps.size() <= max) return;
  std::optional<int64_t> departs = g.first_failing_logits;
  for (const auto& at : {g.first_differing_step, g.first_failing_cache})
    if (at && (!departs || *at < *departs)) departs = at;
  const size_t head = max / 2, tail = max - head - (departs ? 1 : 0);
  std::vector<GenerationStep> kept;
  kept.reserve(max);
  for (size_t i = 0; i < g.steps.size(); ++i)
    if (i < head || i >= g.steps.size() - tail || (departs && g.steps[i].step == *departs))
      kept.push_back(std::move(g.steps[i]));
  g.steps_not_listed = static_cast<int64_t>(g.steps.size() - kept.size());
  g.steps = std::move(kept);
}

// The loop on `prompt` judged step by step, summarized (no stepwise
// checks): the decoder fed PyTorch's encoder outputs. Errors: the dump's;
// ORT failing is a failed "run" check.
Result<GenerationResult> JudgedLoop(const TorchDump& dump, const GenerationRecord& r, const TolerancePolicy& policy,
                                    const StepSession& session, const TensorSet& prompt) {
  GenerationResult g{.length = r.length, .prompt_length = r.prompt_length, .batch = r.batch};
  StepJudge judge(dump, r, policy, g);
  TokenChooser chooser(r);
  Status loop = RunLoopInForm(session, r, prompt, static_cast<int64_t>(r.steps.size()),
                              [&judge](const DecodeStepOutput& s) { return judge.Step(s); }, &chooser, g.checks);
  if (judge.bad_input()) return std::unexpected(*judge.bad_input());
  if (!loop) g.checks.push_back({"run", Verdict::kFail, loop.error().message()});
  Summarize(g, judge.starts_why(), judge.shape_why());
  return g;
}

}  // namespace

Result<GenerationResult> RunGeneration(const TorchDump& dump, const GenerationRecord& r,
                                       const GenerationOptions& o) {
  GenerationResult out{.encoder = o.encoder_path, .length = r.length, .prompt_length = r.prompt_length,
                       .batch = r.batch};
  for (const KvPair& kv : r.kv) out.kv.push_back(kv.present + " -> " + kv.past);
  if (r.steps.empty()) return InvalidArgument("manifest.json: generation.steps: the record has no steps");
  // ORT's failures are the run's (a FAIL with ORT's message, the steps so far
  // judged); the dump's and the record's are the input's (an error, exit 2).
  const auto failed_run = [&](const Error& e, const std::string& starts_why = {},
                              const std::string& shape_why = {}) -> Result<GenerationResult> {
    out.checks.push_back({"run", Verdict::kFail, e.message()});
    for (const GenerationStep& s : out.steps) out.loop_ms += s.ms;
    Summarize(out, starts_why, shape_why);
    ListAtMost(out, kMaxListedGenerationSteps);
    return out;
  };
  PARITY_ASSIGN_OR_RETURN(TensorSet prompt, LoadTorchInputs(dump));
  // With --encoder, the prompt fed PyTorch's encoder outputs too: the loop
  // replayed on it says whether a failing loop is the encoder's or the decoder's.
  std::optional<TensorSet> torch_prompt;
  if (!r.encoder_outputs.empty()) {
    PARITY_ASSIGN_OR_RETURN(TensorSet expected, LoadTorchFiles(dump, r.encoder_outputs));
    TensorSet inputs;
    if (!o.encoder_path.empty()) {
      PARITY_ASSIGN_OR_RETURN(inputs, LoadTorchFiles(dump, r.encoder_inputs));
      torch_prompt = prompt;
      for (const auto& [input, output] : r.encoder_feeds)
        if (const Tensor* t = expected.Find(output)) torch_prompt->Set(input, *t);
    }
    if (Status s = RunEncoder(r, o, expected, inputs, prompt, out); !s) return failed_run(s.error());
  }
  auto session = WithContext(StepSession::Open(o.model_path, o.config, o.cache_form, CachePairsOf(r)), o.model_path);
  if (!session) return failed_run(session.error());
  PARITY_RETURN_IF_ERROR(FitsTheModel(r, *session, prompt, o.model_path));
  StepJudge judge(dump, r, o.policy, out);
  TokenChooser chooser(r);
  Status loop = RunLoopInForm(
      *session, r, prompt, static_cast<int64_t>(r.steps.size()),
      [&](const DecodeStepOutput& s) -> Status {
        PARITY_RETURN_IF_ERROR(judge.Step(s));
        KeepJudgedStep(o, s, out);
        return {};
      },
      &chooser, out.checks);
  if (judge.bad_input()) return std::unexpected(*judge.bad_input());
  if (!loop) return failed_run(loop.error(), judge.starts_why(), judge.shape_why());
  for (const GenerationStep& s : out.steps) out.loop_ms += s.ms;
  if (r.prompt_length > 1) {
    auto stepwise = RunStepwise(*session, r, prompt);
    if (!stepwise) return failed_run(stepwise.error(), judge.starts_why(), judge.shape_why());
    out.checks.push_back(CompareStates("prefill_equals_stepwise",
                                       "ORT's prompt at once and one token at a time: the last logits and caches",
                                       judge.prefill, *stepwise, o.policy, prompt.Find(r.mask_input)));
  }
  if (r.stepwise) {
    PARITY_ASSIGN_OR_RETURN(GenerationCheck c, TorchStepwise(dump, r, o.policy, prompt.Find(r.mask_input)));
    out.checks.push_back(std::move(c));
  }
  Summarize(out, judge.starts_why(), judge.shape_why());
  if (r.search.kind != "greedy") out.checks.push_back(SearchCheck(r, judge.parts_why()));
  if (torch_prompt) {
    PARITY_ASSIGN_OR_RETURN(GenerationResult fed_torch, JudgedLoop(dump, r, o.policy, *session, *torch_prompt));
    SplitEncoderFault(out, fed_torch);
    if (out.verdict == Verdict::kPass && fed_torch.verdict == Verdict::kFail) out.verdict = Verdict::kFail;
  }
  ListAtMost(out, kMaxListedGenerationSteps);
  return out;
}

}  // namespace parity
