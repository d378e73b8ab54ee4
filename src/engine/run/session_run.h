// Runs a model under a config: the Runner of Loader → Runner → Comparator.
// Joins the ONNX adapter (the model, optionally with intermediates exposed)
// and the ORT adapter (the session), and names the model and sample in every
// error.
#pragma once

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
