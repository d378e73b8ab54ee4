// One sample of a dataset judged: both sides run through Runners that keep
// one session each, created once (engine/runner/runner.h: in process, or on
// another ORT release, its config's ort_library, in a child process),
// every output judged by the one judge (CompareSets -> JudgeTensor) and
// reduced to a small DatasetCell. The local engine and every Ray actor
// (`parity dataset-worker`, docs/dataset.md) evaluate through this class, so
// both engines give the same cells bit for bit.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/dataset/dataset_result.h"
#include "engine/load/reference.h"
#include "engine/runner/runner.h"
#include "onnx/model.h"
#include "ort/session.h"

namespace parity {

struct DatasetEvalOptions {
  // A kConfig (MODEL itself under reference.config) or a kModel (a reference
  // model MODEL derives from, run under reference.config).
  Reference reference;
  RunConfig target;
  TolerancePolicy policy;
  std::string label;  // names MODEL in errors
  // MODEL's file: the reference's Runner runs it (or reference.path, a
  // kModel) under reference.config, on reference.config.ort_library's ORT.
  std::filesystem::path model_path;
  // Stored reference outputs (check --reference-outputs DIR: a torch.nn.Module's,
  // written by parity.check): when set, `reference` is not run; each entry's
  // reference is DIR/STEM.npz (LoadDatasetReference, dataset_source.h).
  std::filesystem::path reference_outputs;
  // Symlinks inside the dataset and reference folders are followed
  // (--allow-symlinks; refused by default: core/own_tree.h).
  bool allow_symlinks = false;
};

class DatasetEvaluator {
 public:
  // Creates the reference's runner and the target's, each with its session.
  // `reference_model` is the kModel's loaded model, else null; `model` is run
  // as loaded and must outlive the evaluator. Errors: a session ORT cannot
  // create (the session's error), a runtime library that cannot be loaded; a
  // reference kind other than config or model.
  static Result<DatasetEvaluator> Create(const Model& model, const Model* reference_model,
                                         const DatasetEvalOptions& options);

  // The outputs judged, in the reference's order (every row's cells).
  const std::vector<std::string>& outputs() const { return outputs_; }

  // Whether the reference is stored outputs (options.reference_outputs).
  const std::filesystem::path& reference_outputs() const { return options_.reference_outputs; }
  bool allow_symlinks() const { return options_.allow_symlinks; }

  // Runs `sample` on both sessions (with stored reference outputs, the
  // target only, judged against `stored`) and judges each output. A tolerance
  // policy CompareSets refuses, or a run ORT refuses, is the error (naming
  // the sample). An output missing on one side or of another shape is a
  // failed cell (score +inf), not an error. Thread-compatible.
  Result<std::vector<DatasetCell>> Evaluate(const Sample& sample, const TensorSet* stored = nullptr) const;

 private:
  DatasetEvaluator(std::unique_ptr<Runner> reference, RunnerJob job, std::unique_ptr<Runner> target,
                   RunnerJob target_job, DatasetEvalOptions options)
      : reference_(std::move(reference)), job_(std::move(job)), target_(std::move(target)),
        target_job_(std::move(target_job)), options_(std::move(options)) {}
  std::unique_ptr<Runner> reference_;  // none with stored reference outputs
  RunnerJob job_;                      // the reference's: its model, one kept session
  std::unique_ptr<Runner> target_;     // MODEL under options.target, one kept session
  RunnerJob target_job_;               // its job: MODEL in memory (`loaded`)
  DatasetEvalOptions options_;
  std::vector<std::string> outputs_;
};

}  // namespace parity
