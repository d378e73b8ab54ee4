#include "engine/torch/locate_torch.h"

#include "engine/runner/runner.h"

namespace parity {

Result<TorchLocateResult> LocateAgainstTorch(const Model& model, const Model* target_model, const TorchDump& dump,
                                             const LocateOptions& options) {
  const Model& judged = target_model ? *target_model : model;
  const std::string label = target_model ? options.target_label : options.model_label;
  TorchCompareOptions compare{.policy = options.policy, .label = label};
  TorchLocateResult result;
  PARITY_ASSIGN_OR_RETURN(result.exported, CompareWithTorch(judged, dump, options.reference, compare));

  PARITY_ASSIGN_OR_RETURN(TensorSet inputs, LoadTorchInputs(dump));
  PARITY_ASSIGN_OR_RETURN(TensorSet expected, LoadTorchOutputs(dump));
  Sample sample{"torch", std::move(inputs)};
  PARITY_ASSIGN_OR_RETURN(TensorSet outputs, MakeSessionRunner(options.target)
                                                  ->Run({.model = label, .loaded = &judged, .sample = sample.name},
                                                        sample.tensors));
  CompareOptions outputs_compare{.policy = options.policy};
  TensorSet fp64;
  PARITY_RETURN_IF_ERROR(CalibrateOnTorchFp64(dump, outputs_compare, &fp64));
  PARITY_ASSIGN_OR_RETURN(result.deployed, CompareSets(expected, outputs, outputs_compare));

  if (!result.deployed.passed() && result.exported.passed()) {
    // The export agrees with PyTorch; the deployed config does not: a fusion
    // (or the provider) changed the numbers. Find the fused node.
    PARITY_ASSIGN_OR_RETURN(LocateReport fusion, Locate(model, target_model, sample, options));
    result.fusion = std::move(fusion);
  }
  return result;
}

}  // namespace parity
