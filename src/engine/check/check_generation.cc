// The generation stage of `parity check --torch DUMP` when the dump holds
// PyTorch's greedy decode (engine/generate/, docs/generation.md): the loop
// replayed on ORT at the deployed config, its findings in a stage of their
// own and its result in CheckReport::generation.
#include <fmt/format.h>

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
  if (g.first_failing_logits) {
    const auto& s = g.steps[*g.first_failing_logits];
    f.push_back(Fail("generation.logits", fmt::format("step {}'s logits leave the tolerance: {}", s.step, s.logits_why)));
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

}  // namespace

void StageGeneration(Context& ctx) {
  if (!ctx.dump) return;
  auto record = LoadGenerationRecord(*ctx.dump);
  StageResult stage{.name = "generation"};
  if (!record) {
    ctx.input_error = record.error();
    return;
  }
  if (!*record) return;
  GenerationOptions o{.model_path = ctx.options.model_path, .encoder_path = ctx.options.encoder_path,
                      .config = ctx.options.target, .policy = ctx.policy};
  auto result = RunGeneration(*ctx.dump, **record, o);
  if (!result) {
    stage.findings.push_back(Fail("generation.run", result.error().message()));
  } else {
    stage.findings = Findings(*result);
    ctx.report.generation = std::move(*result);
  }
  stage.status = StatusOf(stage.findings);
  ctx.report.stages.push_back(std::move(stage));
}

}  // namespace parity::check_internal
