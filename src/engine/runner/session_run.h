// The session helpers beneath the Runner (runner.h): a model under a config
// made an ORT session, and one sample run on it. Joins the ONNX adapter (the
// model, optionally with intermediates exposed) and the ORT adapter (the
// session), and names the model and sample in every error. What ORT is asked
// to save of its optimized model lives here too (a Runner's plan job).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "onnx/model.h"
#include "ort/session.h"

namespace parity {

// What ORT loads for `model`: the file itself while the model is that file's
// (Model::unmodified_file), so no serialized copy of its weights is held;
// else the model serialized, errors naming `label`.
Result<ort::ModelSource> SourceOf(const Model& model, const std::string& label);

// The model with `tensors` exposed (WithExtraOutputs), serialized: from
// `serialized` (the bytes of `model` itself, or its file: SourceOf)
// without another copy of the model; one copy shared by every session that
// observes the same tensors of the model.
Result<ort::ModelSource> ExposedSource(const Model& model, const ort::ModelSource& serialized,
                                       const std::vector<std::string>& tensors, const std::string& label);

// Where the optimized model ORT saves puts its weights.
enum class PlanWeights {
  kWritten,     // the initializers of 1024 bytes or more (ORT's default threshold) in `<path>.data`
  kDropped,     // the same, but `<path>.data` is a link to /dev/null made first: the structure alone
  // No side file: ORT keeps the source's external references as they are
  // (it reads none of them) and writes inline only what it made itself. For
  // a source whose large tensors are all references (a ModelSource of bytes
  // with an external-data folder): with a side file ORT read every external
  // tensor whole to write it, a sparse 3 GiB table feeding a Gather of 3 rows
  // cost 3 GB (issue 56 class 13).
  kReferenced,
};
// Asks ORT (through `config`) to save its optimized model to `path`, its
// weights as `weights` says (kOrtSessionOptionsOptimizedModelExternalInitializersFileName
// in onnxruntime_session_options_config_keys.h). `path` must lie in a scratch
// folder parity made (ScratchDir), so no one else's file is replaced.
Status AskForOptimizedModel(RunConfig& config, const std::filesystem::path& path, PlanWeights weights);
// The side file of `optimized_path`'s weights: `<optimized_path>.data`.
std::filesystem::path PlanWeightsFile(const std::filesystem::path& optimized_path);

// A session over `model` under `config`. `label` names the model in errors
// (usually its path). Errors are the session's, with the label as context.
Result<ort::Session> CreateSession(const Model& model, const RunConfig& config, const std::string& label,
                                   const ort::SessionExtras& extras = {});

// Runs one sample; errors say which sample and model.
// `buffers`: ort::Session::Run's (kBorrowed for tensors dropped at once).
// `timeout_s` > 0: the run is stopped past it (ort::IsRunTimeout).
Result<TensorSet> RunSample(const ort::Session& session, const Sample& sample, const std::string& label,
                            const std::vector<std::string>& output_names = {},
                            ort::OutputBuffers buffers = ort::OutputBuffers::kCopied, double timeout_s = 0);

// The model with every intermediate tensor (every node output, in
// topological order) exposed as an output, and the list of what was exposed.
struct ObservedModel {
  Model model;
  std::vector<std::string> observed;  // in topological order, graph outputs included
};
Result<ObservedModel> ObserveAllTensors(const Model& model);

}  // namespace parity
