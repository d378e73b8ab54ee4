#include "engine/locate/local_error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/quant/cast.h"
#include "engine/run/session_run.h"
#include "onnx/edit.h"

namespace parity {

ErrorSummary Summarize(const std::string& name, const JudgedTensor& j) {
  return {.tensor = name,
          .max_abs = j.metrics.max_abs,
          .max_rel = j.metrics.max_rel,
          .mismatches = j.metrics.mismatches,
          .score = j.score,
          .pass = j.reason.empty(),
          .snr_db = j.metrics.snr_db};
}

void KeepWorst(ErrorSummary& worst, const ErrorSummary& c) {
  if (worst.tensor.empty() || c.score > worst.score || (!c.pass && worst.pass)) {
    const bool pass = worst.tensor.empty() ? c.pass : (worst.pass && c.pass);
    worst = c;
    worst.pass = pass;
  } else {
    worst.pass = worst.pass && c.pass;
  }
}

Result<RegionModels> CutRegion(const Model& reference_model, const Model& target_model,
                               const std::vector<std::string>& boundary, const std::vector<std::string>& outputs,
                               const TensorSet& reference_values) {
  RegionModels r;
  PARITY_ASSIGN_OR_RETURN(r.reference, WithContext(ExtractRegion(reference_model, boundary, outputs),
                                                   "cutting the region from the reference model"));
  PARITY_ASSIGN_OR_RETURN(r.target, WithContext(ExtractRegion(target_model, boundary, outputs),
                                                "cutting the region from the target model"));
  for (const auto& name : boundary) {
    const Tensor* t = reference_values.Find(name);
    if (t == nullptr) return NotFound(fmt::format("no reference value for region input '{}'", name));
    r.inputs.Set(name, *t);
  }
  return r;
}

Result<RegionRun> RunRegion(const RegionModels& region, const RunConfig& reference, const RunConfig& target,
                            const TolerancePolicy& policy, const std::string& label, int* sessions) {
  RegionRun run;
  const Sample sample{"reference inputs", region.inputs};
  {
    PARITY_ASSIGN_OR_RETURN(ort::Session s, CreateSession(region.reference, reference, label + " (reference)"));
    if (sessions) ++*sessions;
    PARITY_ASSIGN_OR_RETURN(run.expected, RunSample(s, sample, label));
  }
  {
    PARITY_ASSIGN_OR_RETURN(ort::Session s, CreateSession(region.target, target, label + " (target)"));
    if (sessions) ++*sessions;
    PARITY_ASSIGN_OR_RETURN(run.actual, RunSample(s, FitToSession(s, sample), label));
  }
  for (const auto& [name, ref] : run.expected) {
    const Tensor* test = run.actual.Find(name);
    if (test == nullptr) return InternalError(fmt::format("region output '{}' missing", name));
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, ref, *test, policy));
    KeepWorst(run.local, Summarize(name, j));
  }
  return run;
}

}  // namespace parity
