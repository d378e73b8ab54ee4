// A check across two ONNX Runtime releases (issue 43, docs/locate.md "Two
// runtimes"): the target runs on the process's ORT, the reference on the
// library its config names, in a child `parity runner-worker`
// (check_reference.cc); a failure is localized node by node across both
// runtimes (LocateAcrossRuntimes), the fused plans compared.
#include <fmt/format.h>

#include "engine/check/check_internal.h"
#include "engine/locate/runtime_diff.h"
#include "engine/runner/runner.h"

namespace parity::check_internal {

Result<LocateReport> LocateOnTwoRuntimes(const CheckOptions& options, const Model& model,
                                         const TolerancePolicy& policy, const Sample& sample) {
  RuntimeLocateOptions o{.reference = options.reference.config,
                         .target = options.target,
                         .policy = policy,
                         .model_label = options.model_path};
  return LocateAcrossRuntimes(model, sample, o);
}

}  // namespace parity::check_internal
