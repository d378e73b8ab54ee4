#include "engine/load/samples.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/inputs/input_check.h"
#include "engine/run/tensor_source.h"
#include "onnx/inspect.h"

namespace parity {

Result<std::vector<Sample>> LoadSamplesFor(const Model& model, const std::filesystem::path& path,
                                           const SampleLoadOptions& options) {
  SampleLoadOptions named = options;
  if (named.model_label.empty()) named.model_label = model.path().string();
  return LoadSamplesFor(Inspect(model), path, named);
}

Result<std::vector<Sample>> LoadSamplesFor(const ModelInfo& info, const std::filesystem::path& path,
                                           const SampleLoadOptions& options) {
  const std::string where = path.string();
  const std::string& model_label = options.model_label;
  TensorSourceOptions source{.allow_symlinks = options.allow_symlinks, .symlink_hint = options.symlink_hint};
  for (const auto& v : info.inputs) source.input_names.push_back(v.name);
  PARITY_ASSIGN_OR_RETURN(std::vector<Sample> samples, LoadSamples(path, source));
  if (samples.empty()) {
    if (!info.inputs.empty()) return InvalidArgument(fmt::format("{}: no tensors", where));
    samples.push_back({"default", {}});
  }
  PARITY_RETURN_IF_ERROR(CheckInputs(samples, info.inputs, where, model_label));
  if (options.sample.empty()) return samples;
  std::vector<std::string> names;
  for (Sample& s : samples) {
    if (s.name == options.sample) return std::vector<Sample>{std::move(s)};
    names.push_back(s.name);
  }
  return NotFound(fmt::format("{}: no sample named '{}' (samples: {})", where, options.sample, fmt::join(names, ", ")));
}

}  // namespace parity
