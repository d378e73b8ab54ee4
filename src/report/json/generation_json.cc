#include <cmath>

#include "report/generation_report.h"

namespace parity {
namespace {

using json = nlohmann::json;

json Num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json StepToJson(const GenerationStep& s) {
  return {{"step", s.step},
          {"kind", s.kind},
          {"torch_tokens", s.torch_tokens},
          {"ort_tokens", s.ort_tokens},
          {"tokens_agree", s.tokens_agree},
          {"judged", s.judged},
          {"logits", {{"status", VerdictName(s.logits)},
                      {"max_abs", Num(s.logits_max_abs)},
                      {"band", Num(s.logits_band)},
                      {"score", Num(s.logits_score)},
                      {"why", s.logits_why}}},
          {"cache", {{"status", VerdictName(s.cache)},
                     {"worst", s.cache_worst},
                     {"max_abs", Num(s.cache_max_abs)},
                     {"score", Num(s.cache_score)}}},
          {"starts_with_past", VerdictName(s.starts_with_past)},
          {"ms", Num(s.ms)}};
}

}  // namespace

json GenerationToJson(const GenerationResult& g) {
  json steps = json::array();
  for (const auto& s : g.steps) steps.push_back(StepToJson(s));
  json checks = json::array();
  for (const auto& c : g.checks)
    checks.push_back({{"id", c.id}, {"status", CheckVerdictName(c.status)}, {"message", c.message}});
  return {{"status", CheckVerdictName(g.verdict)},
          {"length", g.length},
          {"prompt_length", g.prompt_length},
          {"batch", g.batch},
          {"encoder", g.encoder.empty() ? json(nullptr) : json(g.encoder)},
          {"kv_map", g.kv},
          {"tokens_agreeing", g.tokens_agreeing},
          {"first_differing_step", Opt(g.first_differing_step)},
          {"first_failing_logits_step", Opt(g.first_failing_logits)},
          {"first_failing_cache_step", Opt(g.first_failing_cache)},
          {"error_growth", Num(g.error_growth)},
          {"loop_ms", Num(g.loop_ms)},
          {"checks", checks},
          {"steps_not_listed", g.steps_not_listed},
          {"steps", steps}};
}

json GenerationPromptsToJson(const std::vector<GenerationPrompt>& prompts) {
  json out = json::array();
  for (const auto& p : prompts)
    out.push_back({{"dump", p.dump},
                   {"status", CheckVerdictName(p.verdict)},
                   {"prompt_length", p.prompt_length},
                   {"length", p.length},
                   {"tokens_agreeing", p.tokens_agreeing},
                   {"first_differing_step", Opt(p.first_differing_step)},
                   {"first_failing_logits_step", Opt(p.first_failing_logits)},
                   {"first_failing_cache_step", Opt(p.first_failing_cache)},
                   {"worst_logits_score", Num(p.worst_logits_score)},
                   {"reason", p.reason.empty() ? json(nullptr) : json(p.reason)},
                   {"error", p.error.empty() ? json(nullptr) : json(p.error)}});
  return out;
}

}  // namespace parity
