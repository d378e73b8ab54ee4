// What a check's verdict rests on (issue 50; docs/errors.md "Exit 4"):
// CoverageOf counts it from the finished report.
#include <fmt/format.h>

#include <algorithm>

#include "engine/check/check_internal.h"

namespace parity::check_internal {

bool WasJudged(const SampleResult& s) {
  // A sample judged for robustness only (a derived model's out-of-range
  // sample: its outputs unjudged) is no numerics coverage.
  const bool outputs_judged =
      s.outputs.empty() || std::any_of(s.outputs.begin(), s.outputs.end(), [](const OutputResult& o) {
        return o.comparison.status != Verdict::kUnchecked;
      });
  return !s.timed_out && s.status != Verdict::kUnchecked && outputs_judged;
}

CheckCoverage CoverageOf(const CheckReport& r) {
  CheckCoverage c;
  for (const SampleResult& s : r.samples) {
    if (s.kind == SampleKindName(SampleKind::kAnomaly)) continue;
    ++c.samples;
    if (s.timed_out) {
      ++c.timed_out;
    } else if (WasJudged(s)) {
      ++c.judged;
      c.outputs_judged += static_cast<int>(s.outputs.size());
    } else {
      ++c.refused;
    }
  }
  if (r.alignment) {
    c.layers_aligned = r.alignment->Count(Verdict::kPass) + r.alignment->Count(Verdict::kFail);
    c.layers_unchecked = r.alignment->Count(Verdict::kUnchecked);
  }
  if (r.alignment && !r.alignment->first_divergence && !r.alignment->unexplained)
    if (const size_t n = r.alignment->Uncovered().size(); n > 0)
      c.missing.push_back(fmt::format("{} PyTorch layer(s) that value alignment refused, with no agreeing layer "
                                      "after them: a divergence there could not show",
                                      n));
  if (r.generation)
    for (const auto& step : r.generation->steps) c.generation_steps += step.judged;
  std::vector<std::string> died;
  for (const SampleResult& s : r.samples)
    if (s.behaviour == kReferenceDied) died.push_back(s.name);
  if (!died.empty())
    c.missing.push_back(fmt::format("the reference's runtime died: {} sample(s) could not be run on it, the first "
                                    "'{}'; a PASS needs every sample run on both sides",
                                    died.size(), died.front()));
  c.branches_unjudged = r.control_flow.unjudged;
  if (c.judged == 0 && c.generation_steps == 0)
    c.missing.push_back(
        c.samples == 0 ? std::string("no sample to judge")
                       : fmt::format("no sample was judged: {} of {} refused (or undecidable in float32), {} "
                                     "stopped at the time limit; a PASS needs at least one sample whose outputs were "
                                     "judged",
                                     c.refused, c.samples, c.timed_out));
  // Each says why a difference there could not show and how to judge it
  // (check_control_flow.cc Unjudged).
  c.missing.insert(c.missing.end(), c.branches_unjudged.begin(), c.branches_unjudged.end());
  return c;
}

}  // namespace parity::check_internal
