// The JSON forms of the PyTorch comparisons (engine/torch/torch_compare.h,
// engine/torch/locate_torch.h): `parity align --json` (parity.align/1), the
// `alignment` of `parity check --torch` (docs/contract.md ("Reports")) and
// `parity locate --reference torch:DIR --json` (parity.locate_torch/1).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/run_config.h"
#include "engine/torch/locate_torch.h"
#include "engine/torch/torch_compare.h"

namespace parity {

// {"alignment": [{"module", "file", "call", "output_index", "leaf", "type",
//   "tensor" (or null), "node", "op_type", "how", "reason" (when set),
//   "status", "metrics": {...} (when checked), "atol", "rtol"}],
//  "first_divergence": {"module", "call", "file", "tensor", "node", "op_type",
//   "max_abs", "reason"} or null,
//  "unexplained": {"after_module", "unchecked_modules", "failing_outputs", "message"} or absent,
//  "summary": {"layers", "aligned_by_scope", "aligned_by_name", "aligned_by_value", "unaligned",
//              "folded", "leaves_aligned", "leaves_by_structure", "pass", "fail", "unchecked"},
//  "outputs": [{"name", "status", "max_abs", "reason"}], "passed": bool}
nlohmann::json TorchComparisonToJson(const TorchComparison& c);

// `parity align --json`: {"schema": "parity.align/1", "config": the ONNX
// side's config, then every key of TorchComparisonToJson}.
nlohmann::json AlignReportToJson(const TorchComparison& c, const RunConfig& config);

// parity.locate_torch/1 with "reference": "torch:DIR", the `alignment` entries, the
// first divergence (with `module`), the deployed outputs and, when run, the
// fusion localization.
nlohmann::json TorchLocateResultToJson(const TorchLocateResult& result, const std::string& dump_dir,
                                       const LocateOptions& options);

}  // namespace parity
