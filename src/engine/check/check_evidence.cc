// The evidence rules of the numerics stage that are not a tolerance
// (issue 50; docs/evidence.md): the conditioning probe of a
// failing sample, and a derived model's boundary sample beyond its inputs'
// range judged for robustness.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "engine/check/check_internal.h"
#include "engine/inputs/perturb.h"
#include "engine/torch/layer_evidence.h"

namespace parity::check_internal {

// How far the target's own float32 evaluation moves each float output of
// `sample` when its float inputs move by one ulp (perturb.h): |f(x') - f(x)|
// elementwise, the larger of two draws. Nothing when a perturbed run fails.
std::optional<TensorSet> ConditioningSpread(const Context& ctx, const Sample& sample,
                                            const TensorSet& outputs) {
  std::optional<TensorSet> spread;
  for (uint64_t seed : {1u, 2u}) {
    auto moved = RunOn(ctx, *ctx.target.session(), PerturbByUlp(sample, seed));
    if (!moved) return std::nullopt;
    TensorSet next;
    for (const auto& [name, y] : outputs) {
      const Tensor* y2 = moved->Find(name);
      if (y2 == nullptr || y2->shape() != y.shape() || !IsFloating(y.dtype()) || y2->dtype() != y.dtype())
        continue;
      next.Set(name, SpreadOf(y, *y2, spread ? spread->Find(name) : nullptr));
    }
    spread = std::move(next);
  }
  return spread;
}

// A derived model's boundary sample beyond the range its numbers are judged
// on (input_range.h): judged for robustness, every output finite where the
// reference's is; its comparisons are kept, unjudged, for the reader.
void JudgeForRobustness(Context& ctx, SampleResult& result, const std::string& id, const std::string& why,
                        const SetComparison& cmp, std::vector<CheckFinding>& f) {
  std::vector<std::string> nonfinite;
  for (TensorComparison t : cmp.tensors) {
    if (t.metrics.nan_mismatch + t.metrics.inf_mismatch > 0) nonfinite.push_back(t.name);
    t.status = Verdict::kUnchecked;
    t.reason = "not judged against a band: the sample lies outside the derived model's range (" + why + ")";
    result.outputs.push_back({t.name, OrtAgainst(ctx.options), std::move(t)});
  }
  result.status = nonfinite.empty() ? Verdict::kPass : Verdict::kFail;
  result.behaviour = nonfinite.empty() ? "outputs finite" : "nan/inf where the reference is finite";
  const std::string rule = fmt::format("outside the range the derived model's numbers are judged on: {}; judged "
                                       "for robustness (finite outputs, no crash), not against float bands",
                                       why);
  if (nonfinite.empty())
    f.push_back(Pass(id + ".robustness", rule + ": every output finite"));
  else
    f.push_back(Fail(id + ".robustness", fmt::format("{}: NaN/Inf where the reference is finite in {}", rule,
                                                     fmt::join(nonfinite, ", "))));
}

// Layers outside their band by an isolated excursion (layer_evidence.h):
// one note naming the first few, never a failed test.
void ExcursionNotes(const TorchComparison& c, std::vector<std::string>& notes) {
  std::vector<std::string> named;
  size_t count = 0;
  for (const LayerVerdict& v : c.layers) {
    if (v.note.empty() || v.status != Verdict::kPass) continue;
    if (++count <= 3)
      named.push_back(fmt::format("'{}' ({} of {} elements, max_abs {:.3g})", v.alignment.module,
                                  v.metrics.mismatches, v.metrics.count, v.metrics.max_abs));
  }
  if (count == 0) return;
  notes.push_back(fmt::format("against PyTorch, {} layer(s) left their band by an isolated excursion only (a handful "
                              "of elements within {:g}x the band, the outputs agreeing): float32 noise, not "
                              "evidence: {}{}",
                              count, kFewBands, fmt::join(named, ", "), count > named.size() ? ", ..." : ""));
}

}  // namespace parity::check_internal
