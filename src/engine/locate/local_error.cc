#include "engine/locate/local_error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/quant/cast.h"
#include "engine/runner/runner.h"
#include "onnx/edit.h"
#include "onnx/graph.h"

namespace parity {

ErrorSummary Summarize(const std::string& name, const JudgedTensor& j) {
  return {.tensor = name,
          .max_abs = j.metrics.max_abs,
          .max_rel = j.metrics.max_rel,
          .mismatches = j.metrics.mismatches,
          .score = j.score,
          .pass = j.passed(),
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
  // Each side on a runner of its own config, its session released before
  // the other's is made (one copy of the weights at a time).
  PARITY_ASSIGN_OR_RETURN(run.expected, MakeSessionRunner(reference)->Run({.model = label + " (reference)",
                                                                          .loaded = &region.reference,
                                                                          .sample = sample.name},
                                                                         sample.tensors));
  if (sessions) ++*sessions;
  // A float16 target without keep_io_types reads its inputs in its own dtype.
  PARITY_ASSIGN_OR_RETURN(GraphView target_view, BuildGraphView(region.target, {.infer_shapes = false}));
  PARITY_ASSIGN_OR_RETURN(run.actual, MakeSessionRunner(target)->Run({.model = label + " (target)",
                                                                     .loaded = &region.target,
                                                                     .sample = sample.name},
                                                                    FitToGraph(target_view, sample).tensors));
  if (sessions) ++*sessions;
  for (const auto& [name, ref] : run.expected) {
    const Tensor* test = run.actual.Find(name);
    if (test == nullptr) return InternalError(fmt::format("region output '{}' missing", name));
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, ref, *test, policy));
    KeepWorst(run.local, Summarize(name, j));
  }
  return run;
}

}  // namespace parity
