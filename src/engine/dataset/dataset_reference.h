// check --dataset's reference (not a public header): stored outputs (a
// torch.nn.Module's, --reference-outputs), or an ORT reference: MODEL under
// another config, or a --reference-model, in this process or on another ORT
// release (its config's ort_library) in a child. Which of them a dataset
// check has is decided once, here, where it is built (dataset_reference.cc);
// the evaluator, the entry loop, locate and the Ray engine ask it what it
// provides and never test which kind they were given
// (tests/house/test_reference_kinds.py counts such tests outside these files).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/dataset/dataset_result.h"
#include "engine/load/reference.h"
#include "engine/load/reference_model.h"
#include "onnx/model.h"

namespace parity {

// What one entry's samples are judged against: `sample` (one of
// `samples_in_entry`) gives the reference's outputs, or why it has none (the
// sample is then bad, the error its reason).
using DatasetEntryReference = std::function<Result<TensorSet>(const Sample& sample, size_t samples_in_entry)>;

// The reference's values, made ready once for a stream (DatasetEvaluator):
// an ORT reference's runner with its one kept session, or the stored outputs'
// folder.
class DatasetReferenceValues {
 public:
  virtual ~DatasetReferenceValues() = default;
  // The outputs judged, in the reference's order (every row's cells).
  const std::vector<std::string>& outputs() const { return outputs_; }
  // The values for one entry's samples: stored outputs are read now (their
  // error: the entry is one bad sample); an ORT reference runs each sample
  // when asked (its error names the sample "on the reference").
  virtual Result<DatasetEntryReference> ForEntry(const std::filesystem::path& entry) const = 0;

 protected:
  std::vector<std::string> outputs_;
};

class DatasetReference {
 public:
  // Built once (RunDataset): stored outputs when `stored` names a folder (a
  // reference model beside them is the user's mistake, kInvalidArgument
  // naming `command`), else the ORT reference `r`.
  static Result<DatasetReference> Of(const Reference& r, std::filesystem::path stored, std::string_view command);
  // A Ray actor's (`parity dataset-worker`), from the arguments WorkerArgs
  // wrote: `reference_model` "" for MODEL itself, `stored` "" for none.
  static DatasetReference FromWorker(RunConfig config, const std::string& reference_model, const std::string& stored);

  // The model an ORT reference runs (ReferenceModel::Load's error): its
  // --reference-model, else MODEL's own (stored outputs: MODEL's own).
  Result<ReferenceModel> LoadModel() const { return ReferenceModel::Load(reference_); }
  // The config the reference runs under (a stored reference's is unused).
  const RunConfig& config() const { return reference_.config; }
  // The report's reference: "outputs:DIR", "model:PATH [label]" or
  // "onnx:label", with " on LIBRARY" when another ORT release runs it.
  std::string Label() const;
  // The arguments a Ray actor is given for it (`config_json`: the file its
  // resolved config was written to); FromWorker reads them back.
  std::vector<std::string> WorkerArgs(const std::filesystem::path& config_json) const;

  // Makes the values ready: an ORT reference's runner with its session
  // created now (ORT refusing the model, a library that cannot be loaded:
  // the error), or the stored outputs' reader. `target` is MODEL (its file
  // `model_path`), `model` what LoadModel gave; both outlive the result.
  Result<std::unique_ptr<DatasetReferenceValues>> Open(const Model& target, const ReferenceModel& model,
                                                       const std::filesystem::path& model_path,
                                                       bool allow_symlinks) const;

  // Why the dataset's samples are not located against this reference (stored
  // outputs have no intermediate tensors); "" when they are.
  std::string NotLocated() const;
  // Where `sample` first diverges between the reference and the target
  // (`target_config` on MODEL): across the two runtimes when another ORT
  // release runs MODEL's reference; else locate in process, and with a
  // reference model the two models unfused too when the divergence covers
  // several nodes. Fills out.first, out.node(_op), or out.error.
  void Locate(const Model& target, const ReferenceModel& model, const Sample& sample, const RunConfig& target_config,
              const TolerancePolicy& policy, const std::string& model_label, DatasetLocated& out) const;

 private:
  DatasetReference(Reference r, std::filesystem::path stored) : reference_(std::move(r)), stored_(std::move(stored)) {}
  Reference reference_;          // the ORT reference (a config or a model)
  std::filesystem::path stored_;  // the stored outputs' folder, or ""
};

}  // namespace parity
