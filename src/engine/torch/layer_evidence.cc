#include "engine/torch/layer_evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/judge.h"
#include "engine/inputs/perturb.h"
#include "engine/runner/runner.h"

namespace parity {

double WorstBandRatio(const Tensor& ref, const Tensor& test, const Tolerance& tol) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (ref.shape() != test.shape() || !IsFloating(ref.dtype()) || !IsFloating(test.dtype())) return kInf;
  double worst = 0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double r = ref.GetAsDouble(i), t = test.GetAsDouble(i);
    if (!std::isfinite(r) || !std::isfinite(t)) {
      const bool same = (std::isnan(r) && std::isnan(t)) || r == t;
      if (!same) return kInf;
      continue;
    }
    const double d = std::fabs(t - r);
    if (d == 0) continue;
    const double band = Band(tol, std::fabs(r));
    if (band <= 0) return kInf;
    worst = std::max(worst, d / band);
  }
  return worst;
}

bool IsIsolatedExcursion(const Tensor& ref, const Tensor& test, const LayerVerdict& v, std::string& note) {
  if (IsFoldedMask(ref, test, v, note)) return true;
  const TensorMetrics& m = v.metrics;
  if (v.status != Verdict::kFail || m.count == 0 || m.nan_mismatch > 0 || m.inf_mismatch > 0) return false;
  const int64_t handful = std::max(kHandful, m.count / kHandfulPerElements);
  if (m.mismatches > handful) return false;
  const double ratio = WorstBandRatio(ref, test, v.tolerance.tolerance);
  if (!(ratio <= kFewBands)) return false;
  note = fmt::format(
      "an isolated excursion, not evidence: {} of {} elements outside the band, the worst at {:.2g}x it (at most {} "
      "elements within {:g}x the band are float32 noise unless the outputs depart too)",
      m.mismatches, m.count, ratio, handful, kFewBands);
  return true;
}

namespace {

bool IsMaskFill(double x) { return x <= -1e30; }  // -inf included

}  // namespace

bool IsFoldedMask(const Tensor& ref, const Tensor& test, const LayerVerdict& v, std::string& note) {
  const TensorMetrics& m = v.metrics;
  if (v.status != Verdict::kFail || m.count == 0 || m.nan_mismatch > 0 || ref.shape() != test.shape() ||
      !IsFloating(ref.dtype()) || !IsFloating(test.dtype()))
    return false;
  int64_t folded = 0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double r = ref.GetAsDouble(i), t = test.GetAsDouble(i);
    if (IsMaskFill(r) != IsMaskFill(t)) {
      if (!std::isfinite(IsMaskFill(r) ? t : r)) return false;  // the other side: an ordinary value
      ++folded;
      continue;
    }
    if (IsMaskFill(r) || r == t) continue;
    // A band that is not finite (a tolerance resolved past a fill) excuses nothing.
    const double band = Band(v.tolerance.tolerance, std::fabs(r));
    if (!std::isfinite(r) || !std::isfinite(t) || !std::isfinite(band) || std::fabs(t - r) > band) return false;
  }
  if (folded == 0) return false;
  note = fmt::format(
      "a mask folded in, not evidence: the {} of {} elements outside the band hold an attention mask's fill on one "
      "side only (the export adds the mask here, PyTorch later), the others agree",
      folded, m.count);
  return true;
}

void ReinstatePropagatingExcursion(TorchComparison& c, const std::set<std::string>& feeds) {
  if (c.first_divergence || c.outputs.passed()) return;
  for (size_t k = 0; k < c.layers.size(); ++k) {
    LayerVerdict& v = c.layers[k];
    if (v.note.empty() || v.status != Verdict::kPass) continue;
    if (!feeds.empty() && !feeds.contains(v.alignment.tensor)) continue;
    v.status = Verdict::kFail;
    v.note += "; the outputs it feeds depart from PyTorch too: evidence";
    c.first_divergence = k;
    return;
  }
}

Result<TensorSet> LayerSpread(Runner& runner, const RunnerJob& job, const TensorSet& inputs,
                              const TensorSet& values, const TorchComparison& c) {
  std::vector<std::string> names;
  for (const LayerVerdict& v : c.layers)
    if (v.status == Verdict::kFail && !v.alignment.tensor.empty()) names.push_back(v.alignment.tensor);
  TensorSet spread;
  if (names.empty()) return spread;
  for (uint64_t seed : {1u, 2u}) {
    RunnerJob lent = job;  // the same kept session, its values dropped at once
    lent.buffers = ort::OutputBuffers::kBorrowed;
    auto moved = runner.Run(lent, PerturbByUlp(Sample{"torch", inputs}, seed).tensors);
    if (!moved) return TensorSet{};
    for (const auto& name : names) {
      const Tensor* a = values.Find(name);
      const Tensor* b = moved->Find(name);
      if (a == nullptr || b == nullptr || a->shape() != b->shape() || !IsFloating(a->dtype()) ||
          a->dtype() != b->dtype())
        continue;
      spread.Set(name, SpreadOf(*a, *b, spread.Find(name)));
    }
  }
  return spread;
}

}  // namespace parity
