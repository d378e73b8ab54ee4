// Local versus inherited error (pytorch/pytorch#66528): a fused
// region cut out of the model as a standalone model, fed the REFERENCE values
// of its boundary inputs and run under the reference and the target configs.
// What differs then is the region's own (local) error; the error already
// present at its inputs in the cumulative target trace is inherited.
#pragma once

#include <string>
#include <vector>

#include "compare/judge.h"
#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "onnx/model.h"
#include "engine/locate/locate_result.h"

namespace parity {

// A judged tensor (compare/judge.h: JudgeTensor, the one score) as the
// summary locate reports.
ErrorSummary Summarize(const std::string& name, const JudgedTensor& j);
// Keeps the larger score.
void KeepWorst(ErrorSummary& worst, const ErrorSummary& candidate);

struct RegionModels {
  Model reference;  // the region cut from the reference model
  Model target;     // the same region cut from the target model
  TensorSet inputs;  // reference values of the boundary inputs
};

// Cuts the region (boundary -> outputs) out of both models and gathers the
// inputs from `reference_values` (tensors or graph inputs). Errors: the
// region cannot be cut (kInvalidArgument/kNotFound from ExtractRegion, with
// context) or an input value is missing (kNotFound).
Result<RegionModels> CutRegion(const Model& reference_model, const Model& target_model,
                               const std::vector<std::string>& boundary, const std::vector<std::string>& outputs,
                               const TensorSet& reference_values);

struct RegionRun {
  TensorSet expected;  // reference config on the reference region
  TensorSet actual;    // target config on the target region
  ErrorSummary local;  // worst output
};

// Runs the region under both configs (two sessions, added to *sessions).
Result<RegionRun> RunRegion(const RegionModels& region, const RunConfig& reference, const RunConfig& target,
                            const TolerancePolicy& policy, const std::string& label, int* sessions);

}  // namespace parity
