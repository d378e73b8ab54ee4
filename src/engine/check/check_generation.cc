// The generation stage of `parity check --torch DUMP` when the dump holds
// PyTorch's greedy decode (engine/generate/, docs/generation.md): the loop
// replayed on ORT at the deployed config, its findings in a stage of their
// own and its result in CheckReport::generation.
#include <fmt/format.h>

#include <algorithm>

#include "engine/check/check_internal.h"
#include "engine/generate/generation.h"

namespace parity::check_internal {
namespace {

std::vector<CheckFinding> Findings(const GenerationResult& g) {
  std::vector<CheckFinding> f;
  const int64_t n = static_cast<int64_t>(g.steps.size());
  std::string tokens = fmt::format("{}/{} steps give PyTorch's tokens", g.tokens_agreeing, g.length);
  if (g.first_differing_step) tokens += fmt::format("; the first to differ is step {}", *g.first_differing_step);
  f.push_back(g.first_differing_step || n < g.length ? Fail("generation.tokens", tokens)
                                                     : Pass("generation.tokens", tokens));
  double worst = 0;
  for (const auto& s : g.steps) worst = std::max(worst, s.logits_score);
  const auto failing = g.first_failing_logits
                           ? std::find_if(g.steps.begin(), g.steps.end(),
                                          [&](const GenerationStep& s) { return s.step == *g.first_failing_logits; })
                           : g.steps.end();
  if (failing != g.steps.end()) {
    f.push_back(Fail("generation.logits",
                     fmt::format("step {}'s logits leave the tolerance: {}", failing->step, failing->logits_why)));
  } else {
    f.push_back(Pass("generation.logits",
                     fmt::format("every judged step's logits are within the tolerance (worst score {:.3g}; error "
                                 "growth x{:.3g} over the steps)", worst, g.error_growth)));
  }
  for (const auto& s : g.steps)
    if (s.cache == Verdict::kFail) {
      f.push_back(Fail("generation.cache", fmt::format("step {}: {} differs from PyTorch's (max_abs {:.3g}, score {:.3g})",
                                                       s.step, s.cache_worst, s.cache_max_abs, s.cache_score)));
      break;
    }
  for (const auto& c : g.checks)
    f.push_back({"generation." + c.id, c.status, c.message});
  // Where to localize: the first step that departs, dumped as one forward pass.
  std::optional<int64_t> departs = g.first_failing_logits;
  if (g.first_differing_step && (!departs || *g.first_differing_step < *departs)) departs = g.first_differing_step;
  if (departs)
    f.push_back(Skip("generation.locate",
                     fmt::format("to name the node at step {}: python -m parity.torch dump MODULE:FACTORY --at-step {} "
                                 "-o DIR, then parity locate MODEL --reference torch:DIR (docs/generation.md)",
                                 *departs, *departs)));
  return f;
}

// The step where a prompt's loop first departs from PyTorch's: its tokens,
// its logits or its cache, whichever comes first; none when only a check of
// the whole loop failed.
std::optional<int64_t> DepartsAt(const GenerationPrompt& p) {
  std::optional<int64_t> at;
  for (const auto& s : {p.first_differing_step, p.first_failing_logits, p.first_failing_cache})
    if (s && (!at || *s < *at)) at = s;
  return at;
}

// Why a failing prompt fails, with a step that exists (issue 51 item 6: a
// cache-only fault read "16/16 tokens agree" with no reason, and "departs at
// step 16" of a 16-step loop).
std::string PromptReason(const GenerationResult& g, const GenerationPrompt& p) {
  if (!p.error.empty()) return "did not run: " + p.error;
  const std::optional<int64_t> at = DepartsAt(p);
  if (at && at == p.first_differing_step) return fmt::format("its tokens differ from step {}", *at);
  if (at && at == p.first_failing_logits) return fmt::format("its logits leave the tolerance at step {}", *at);
  if (at) {
    for (const auto& s : g.steps)
      if (s.step == *at) return fmt::format("its cache {} leaves PyTorch's at step {}", s.cache_worst, *at);
    return fmt::format("its cache leaves PyTorch's at step {}", *at);
  }
  for (const auto& c : g.checks)
    if (c.status == Verdict::kFail) return fmt::format("{}: {}", c.id, c.message);
  return "its loop ended before its length";
}

GenerationPrompt PromptOf(const TorchDump& dump, const GenerationResult& result) {
  GenerationPrompt p{.dump = dump.dir.string(), .verdict = Verdict::kFail};
  const GenerationResult& g = result;
  for (const auto& c : g.checks)
    if (c.id == "run" && c.status == Verdict::kFail) p.error = c.message;
  p.prompt_length = g.prompt_length;
  p.length = g.length;
  p.tokens_agreeing = g.tokens_agreeing;
  p.first_differing_step = g.first_differing_step;
  p.first_failing_logits = g.first_failing_logits;
  p.first_failing_cache = g.first_failing_cache;
  for (const auto& s : g.steps)
    if (s.judged) p.worst_logits_score = std::max(p.worst_logits_score, s.logits_score);
  p.verdict = g.verdict;
  if (p.verdict == Verdict::kFail) p.reason = PromptReason(g, p);
  return p;
}

// The prompts' distribution in one finding: how many generate PyTorch's
// tokens throughout, the agreement's minimum and median, the worst prompt
// and the step where it departs.
CheckFinding PromptsFinding(const std::vector<GenerationPrompt>& prompts) {
  std::vector<double> share;
  size_t all = 0, failed = 0;
  const GenerationPrompt* worst = nullptr;
  for (const auto& p : prompts) {
    const double s = p.length > 0 ? static_cast<double>(p.tokens_agreeing) / static_cast<double>(p.length) : 0;
    share.push_back(s);
    all += p.error.empty() && !p.first_differing_step && p.tokens_agreeing == p.length;
    failed += p.verdict == Verdict::kFail;
    // The worst: the fewest tokens agreeing, then the largest logits error.
    if (p.verdict == Verdict::kFail &&
        (worst == nullptr || p.tokens_agreeing < worst->tokens_agreeing ||
         (p.tokens_agreeing == worst->tokens_agreeing && p.worst_logits_score > worst->worst_logits_score)))
      worst = &p;
  }
  std::sort(share.begin(), share.end());
  std::string text = fmt::format("{} prompts: {} give PyTorch's tokens at every step (tokens agreeing: min {:.0f}%, "
                                 "median {:.0f}%); {} fail",
                                 prompts.size(), all, 100 * share.front(), 100 * share[share.size() / 2], failed);
  if (worst != nullptr) text += fmt::format("; the worst, {}: {}", worst->dump, worst->reason);
  return failed > 0 ? Fail("generation.prompts", text) : Pass("generation.prompts", text);
}

}  // namespace

GenerationFound StageGeneration(Context& ctx) {
  std::vector<std::pair<std::string, TensorSet>> judged_steps;
  GenerationOptions o{.model_path = ctx.options.model_path, .encoder_path = ctx.options.encoder_path,
                      .config = ctx.options.target, .policy = ctx.judging.policy, .judged_steps = &judged_steps,
                      .cache_form = ctx.options.cache_form};
  GenerationFound found;
  StageResult stage{.name = "generation"};
  std::vector<GenerationPrompt> prompts;
  for (const TorchDump& d : ctx.torch.dumps) {
    const TorchDump* dump = &d;
    auto record = LoadGenerationRecord(*dump);
    if (!record) {
      ctx.input_error = record.error();
      return found;
    }
    if (!*record) continue;
    // A record that cannot be used is bad input (exit 2); ORT failing on
    // the model is the run's FAIL, inside the result.
    auto result = RunGeneration(*dump, **record, o);
    if (!result) {
      const Error& e = result.error();
      ctx.input_error = e.message().starts_with("manifest.json") ? e.With(dump->dir.string()) : e;
      return found;
    }
    prompts.push_back(PromptOf(*dump, *result));
    if (prompts.size() > 1) continue;  // the first record's loop is the report's section
    stage.findings = Findings(*result);
    found.generation = std::move(*result);
  }
  if (prompts.empty()) return found;
  for (auto& [name, inputs] : judged_steps) ctx.torch.generation_samples.push_back(Sample{name, std::move(inputs)});
  if (prompts.size() > 1) {
    stage.findings.push_back(PromptsFinding(prompts));
    found.prompts = std::move(prompts);
  }
  stage.status = StatusOf(stage.findings);
  found.stage = std::move(stage);
  return found;
}

}  // namespace parity::check_internal
