#include "engine/runner/session_run.h"

#include <fmt/format.h>

#include "core/regular_file.h"
#include "onnx/edit.h"
#include "onnx/graph.h"

namespace parity {

Result<ort::ModelSource> SourceOf(const Model& model, const std::string& label) {
  // A file with external data goes as bytes with its external-data folder
  // (the graph alone: its tensors are references), which says that its large
  // tensors are references (PlanWeights::kReferenced).
  if (!model.unmodified_file().empty() && model.external_data_dir().empty())
    return ort::ModelSource::FromFile(model.unmodified_file().string());
  // The tensors still external stay references ORT reads in place.
  PARITY_ASSIGN_OR_RETURN(std::string bytes, WithContext(model.SerializeKeepingExternalData(), label));
  return ort::ModelSource::FromBytes(std::move(bytes), model.external_data_dir().string());
}

Result<ort::ModelSource> ExposedSource(const Model& model, const ort::ModelSource& serialized,
                                       const std::vector<std::string>& tensors, const std::string& label) {
  if (!serialized.is_file()) {
    PARITY_ASSIGN_OR_RETURN(std::string bytes,
                            WithContext(SerializeWithExtraOutputs(model, serialized.bytes(), tensors), label));
    return ort::ModelSource::FromBytes(std::move(bytes), serialized.external_data_dir());
  }
  // ORT reads the unexposed model from its file; the exposed one is the
  // file's own bytes when the model is that file unchanged and holds all its
  // weights (reading them costs less than serializing the parsed proto: 0.3 s
  // of 0.8 s for a 500 MB model), else serialized once here (external tensors
  // left as references read in place); the extra outputs are appended to it.
  std::string bytes;
  if (model.unmodified_file() == serialized.path() && !model.had_external_data()) {
    PARITY_ASSIGN_OR_RETURN(bytes, WithContext(ReadRegularFile(serialized.path(), int64_t{1} << 31), label));
  } else {
    PARITY_ASSIGN_OR_RETURN(bytes, WithContext(model.SerializeKeepingExternalData(), label));
  }
  PARITY_ASSIGN_OR_RETURN(std::string extra, WithContext(SerializeWithExtraOutputs(model, "", tensors), label));
  bytes += extra;
  return ort::ModelSource::FromBytes(std::move(bytes), model.external_data_dir().string());
}

std::filesystem::path PlanWeightsFile(const std::filesystem::path& optimized_path) {
  return optimized_path.parent_path() / (optimized_path.filename().string() + ".data");
}

Status AskForOptimizedModel(RunConfig& config, const std::filesystem::path& path, PlanWeights weights) {
  config.optimized_model_path = path.string();
  if (weights == PlanWeights::kReferenced) return {};
  config.session_entries["session.optimized_model_external_initializers_file_name"] =
      path.filename().string() + ".data";
  if (weights == PlanWeights::kWritten) return {};
  const auto data = PlanWeightsFile(path);
  std::error_code ec;
  std::filesystem::remove(data, ec);
  std::filesystem::create_symlink("/dev/null", data, ec);
  if (ec) return RuntimeError(fmt::format("cannot link {} to /dev/null: {}", data.string(), ec.message()));
  return {};
}

Result<ort::Session> CreateSession(const Model& model, const RunConfig& config, const std::string& label,
                                   const ort::SessionExtras& extras) {
  PARITY_ASSIGN_OR_RETURN(ort::ModelSource source, SourceOf(model, label));
  return WithContext(ort::Session::Create(source, config, extras),
                     fmt::format("{} [{}]", label, config.Label()));
}

Result<TensorSet> RunSample(const ort::Session& session, const Sample& sample, const std::string& label,
                            const std::vector<std::string>& output_names, ort::OutputBuffers buffers,
                            double timeout_s) {
  return WithContext(session.Run(sample.tensors, output_names, buffers, timeout_s),
                     fmt::format("{}, sample '{}'", label, sample.name));
}

Result<ObservedModel> ObserveAllTensors(const Model& model) {
  GraphViewOptions options;
  options.infer_shapes = false;  // WithExtraOutputs infers types itself
  PARITY_ASSIGN_OR_RETURN(GraphView graph, BuildGraphView(model, options));
  ObservedModel out;
  for (const auto& t : IntermediateTensors(graph)) out.observed.push_back(t.name);
  PARITY_ASSIGN_OR_RETURN(out.model, WithExtraOutputs(model, out.observed));
  return out;
}

}  // namespace parity
