// One sample of a dataset judged: the target runs through a Runner that keeps
// one session, created once (engine/runner/runner.h: in process, or on
// another ORT release, its config's ort_library, in a child process), the
// reference gives its values (dataset_reference.h: a Runner of its own, or
// stored outputs),
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
#include "engine/dataset/dataset_reference.h"
#include "engine/load/reference_model.h"
#include "engine/runner/runner.h"
#include "onnx/model.h"
#include "ort/session.h"

namespace parity {

struct DatasetEvalOptions {
  RunConfig target;
  TolerancePolicy policy;
  std::string label;  // names MODEL in errors
  // MODEL's file: an ORT reference of MODEL itself runs it
  // (DatasetReference::Open).
  std::filesystem::path model_path;
  // Symlinks inside the dataset and reference folders are followed
  // (--allow-symlinks; refused by default: core/own_tree.h).
  bool allow_symlinks = false;
};

class DatasetEvaluator {
 public:
  // Makes the reference's values ready (DatasetReference::Open: an ORT
  // reference's runner with its session, or the stored outputs' reader),
  // then the target's runner with its session. `model` is run as loaded;
  // it and `reference_model` (reference.LoadModel()'s) must outlive the
  // evaluator. Errors: a session ORT cannot create (the session's error), a
  // runtime library that cannot be loaded; a reference kind other than
  // config or model.
  static Result<DatasetEvaluator> Create(const Model& model, const ReferenceModel& reference_model,
                                         const DatasetReference& reference, const DatasetEvalOptions& options);

  // The outputs judged, in the reference's order (every row's cells).
  const std::vector<std::string>& outputs() const { return reference_->outputs(); }
  // What each entry's samples are judged against (ForEntry).
  const DatasetReferenceValues& reference() const { return *reference_; }
  bool allow_symlinks() const { return options_.allow_symlinks; }

  // Runs `sample` on the target's session and judges each output against
  // `reference` (what reference().ForEntry gave for it). A tolerance policy
  // CompareSets refuses, or a run ORT refuses, is the error (naming the
  // sample). An output missing on one side or of another shape is a failed
  // cell (score +inf), not an error. Thread-compatible.
  Result<std::vector<DatasetCell>> Evaluate(const Sample& sample, const TensorSet& reference) const;

 private:
  DatasetEvaluator(std::unique_ptr<DatasetReferenceValues> reference, std::unique_ptr<Runner> target,
                   RunnerJob target_job, DatasetEvalOptions options)
      : reference_(std::move(reference)), target_(std::move(target)), target_job_(std::move(target_job)),
        options_(std::move(options)) {}
  std::unique_ptr<DatasetReferenceValues> reference_;
  std::unique_ptr<Runner> target_;  // MODEL under options.target, one kept session
  RunnerJob target_job_;            // its job: MODEL in memory (`loaded`)
  DatasetEvalOptions options_;
};

}  // namespace parity
