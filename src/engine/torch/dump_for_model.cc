#include "engine/torch/dump_for_model.h"

#include "engine/torch/dump_check.h"
#include "onnx/inspect.h"

namespace parity {

Result<TorchDump> LoadDumpForModel(const std::filesystem::path& dir, const Model& model, const std::string& model_path,
                                   bool allow_symlinks, const NoteSink& note) {
  std::string provenance;
  PARITY_ASSIGN_OR_RETURN(auto dump,
                          LoadFittingDump(dir, Inspect(model), model_path, allow_symlinks, {model_path}, &provenance));
  if (!provenance.empty() && note) note("note: " + provenance);
  return dump;
}

Status CheckSomeLayerAligned(const TorchDump& dump, const TorchComparison& comparison, const std::string& model_label) {
  return CheckSomeLayerAligned(dump, comparison.layers.size() - comparison.Count(AlignHow::kNone), model_label);
}

Result<TorchComparison> AlignWithDump(const Model& model, const TorchDump& dump, const RunConfig& config,
                                      const TorchCompareOptions& options) {
  PARITY_ASSIGN_OR_RETURN(auto result, CompareWithTorch(model, dump, config, options));
  PARITY_RETURN_IF_ERROR(CheckSomeLayerAligned(dump, result, options.label));
  return result;
}

}  // namespace parity
