// One model on two ONNX Runtime releases at the same config, node by node
// (docs/locate.md, "Two runtimes"): each runtime is a Runner
// (engine/runner/runner.h), the one that is not the process's in a child
// process. Their fused plans are compared (a fusion one release makes and
// the other does not is named), the tensors that survive both plans are
// observed on both and judged in topological order, and the fused node at the
// first divergence is cut out, fed the reference runtime's values of its
// inputs and run on both: its local error says whether its kernel changed.
#pragma once

#include <filesystem>
#include <string>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/locate/locate_result.h"
#include "onnx/model.h"

namespace parity {

struct RuntimeLocateOptions {
  RunConfig reference;  // the config and its ort_library (empty: the process's)
  RunConfig target;
  TolerancePolicy policy;
  std::string model_label = "model";
  std::filesystem::path repro_dir;  // empty: none
  size_t max_observed = 4096;       // tensors observed (the first ones in topological order)
  std::string binary;               // the parity executable a child runs (runner.h)
};

// Returns a locate report whose `runtimes` holds both runtimes and the plan
// comparison (a divergence is not an error). Errors: a runtime library that
// cannot be loaded (kInvalidArgument), a model or sample ORT refuses, a child
// that died, an unwritable repro.
Result<LocateReport> LocateAcrossRuntimes(const Model& model, const Sample& sample, const RuntimeLocateOptions& o);

}  // namespace parity
