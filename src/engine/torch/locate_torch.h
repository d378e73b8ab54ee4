// `parity locate --reference torch:DIR`: where does the deployed model depart
// from PyTorch? Two questions, asked in order, so an exporter mistake is told
// apart from a runtime fusion problem:
//   1. export: the ONNX model unfused (the reference config, normally
//      `disable`) against the PyTorch dump, layer by layer (torch_compare.h):
//      the first divergent layer by module path, with its ONNX node;
//   2. runtime: the target config's final outputs against PyTorch's; when
//      they fail although the unfused model agrees with PyTorch, the
//      ordinary locate (target vs the unfused run) names the fused node.
// Observing every tensor happens only in the unfused run, where there is no
// fusion to perturb.
#pragma once

#include <optional>

#include "engine/locate/locate.h"
#include "engine/torch/torch_compare.h"
#include "engine/torch/torch_dump.h"

namespace parity {

struct TorchLocateResult {
  TorchComparison exported;  // unfused ONNX vs PyTorch, layer by layer
  SetComparison deployed;    // target's outputs vs PyTorch's outputs
  std::optional<LocateReport> fusion;  // when the target departs but the export does not
  bool passed() const { return exported.passed() && deployed.passed(); }
};

// `target_model`: a model derived from `model` (null: `model` itself). The
// sample is the dump's own inputs. Errors: as CompareWithTorch and Locate.
Result<TorchLocateResult> LocateAgainstTorch(const Model& model, const Model* target_model, const TorchDump& dump,
                                             const LocateOptions& options);

}  // namespace parity
