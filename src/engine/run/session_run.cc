#include "engine/run/session_run.h"

#include <fmt/format.h>

#include "onnx/edit.h"
#include "onnx/graph.h"

namespace parity {

Result<ort::ModelSource> SourceOf(const Model& model, const std::string& label) {
  // A file with external data goes as bytes with its external-data folder
  // (the graph alone: its tensors are references), which says that its large
  // tensors are references (optimized_plan.h PlanWeights::kReferenced).
  if (!model.unmodified_file().empty() && model.external_data_dir().empty())
    return ort::ModelSource::FromFile(model.unmodified_file().string());
  // The tensors still external stay references ORT reads in place.
  PARITY_ASSIGN_OR_RETURN(std::string bytes, WithContext(model.SerializeKeepingExternalData(), label));
  return ort::ModelSource::FromBytes(std::move(bytes), model.external_data_dir().string());
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
