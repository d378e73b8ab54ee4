#include "engine/torch/dump_check.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/sha256.h"
#include "engine/inputs/input_check.h"

namespace parity {

std::string DumpProvenanceNote(const TorchDump& dump, const std::string& model_label,
                               const std::vector<std::string>& model_sha256s) {
  if (!dump.export_record || dump.export_record->sha256.empty() ||
      std::find(model_sha256s.begin(), model_sha256s.end(), dump.export_record->sha256) != model_sha256s.end())
    return "";
  return fmt::format(
      "{}: the dump was made with an export of sha256 {}..., {} is {}...: judging a model changed since the "
      "export (dump again with python -m parity.torch dump --export if it is not derived from it)",
      dump.dir.string(), dump.export_record->sha256.substr(0, 12), model_label,
      model_sha256s.empty() ? std::string("?") : model_sha256s.front().substr(0, 12));
}

Status CheckDumpFitsModel(const TorchDump& dump, const ModelInfo& model, const std::string& model_label,
                          const std::vector<std::string>& model_sha256s, std::string* note) {
  const std::string where = dump.dir.string();
  if (note != nullptr) *note = DumpProvenanceNote(dump, model_label, model_sha256s);
  std::vector<std::string> outputs;
  for (const auto& v : model.outputs) outputs.push_back(v.name);
  for (const auto& [name, file] : dump.outputs)
    if (std::find(outputs.begin(), outputs.end(), name) == outputs.end())
      return InvalidArgument(fmt::format("{}: the dump's output '{}' is not an output of {} (outputs: '{}'){}", where,
                                         name, model_label, fmt::join(outputs, "', '"), DidYouMean(name, outputs)));
  auto tensors = LoadTorchInputs(dump);
  if (!tensors) return std::unexpected(tensors.error());
  PARITY_RETURN_IF_ERROR(
      CheckInputs({Sample{"default", std::move(*tensors)}}, model.inputs, where + " (the dump's inputs)", model_label));
  auto expected = LoadTorchOutputs(dump);
  if (!expected) return std::unexpected(expected.error());
  for (const auto& v : model.outputs) {
    const Tensor* t = expected->Find(v.name);
    if (t == nullptr) continue;
    if (!ShapeFits(v.type, t->shape()))
      return InvalidArgument(fmt::format("{}: the dump's output '{}' has shape {}, {} declares {}: the dump was made "
                                         "from another model",
                                         where, v.name, ShapeToString(t->shape()), model_label, DeclaredType(v.type)));
  }
  return {};
}

Status CheckDumpFitsModelFiles(const TorchDump& dump, const ModelInfo& model,
                               const std::vector<std::string>& model_paths, std::string* note) {
  std::vector<std::string> shas;
  for (const auto& path : model_paths)
    if (!path.empty())
      if (auto sha = Sha256FileHex(path)) shas.push_back(*sha);
  return CheckDumpFitsModel(dump, model, model_paths.empty() ? "the model" : model_paths.front(), shas, note);
}

Result<TorchDump> LoadFittingDump(const std::filesystem::path& dir, const ModelInfo& model,
                                  const std::string& model_label, bool allow_symlinks,
                                  const std::vector<std::string>& model_paths, std::string* note) {
  PARITY_ASSIGN_OR_RETURN(TorchDump dump, LoadTorchDump(dir, {.allow_symlinks = allow_symlinks}));
  DropInputsTheModelLacks(dump, model);
  if (note != nullptr) {
    PARITY_RETURN_IF_ERROR(CheckDumpFitsModelFiles(dump, model, model_paths, note));
    if (std::string dropped = DroppedInputsNote(dump, model_label); !dropped.empty())
      *note = note->empty() ? dropped : *note + "; " + dropped;
  } else {
    PARITY_RETURN_IF_ERROR(CheckDumpFitsModel(dump, model, model_label, {}, nullptr));
  }
  return dump;
}

void DropInputsTheModelLacks(TorchDump& dump, const ModelInfo& model) {
  auto is_model_input = [&](const std::string& name) {
    return std::any_of(model.inputs.begin(), model.inputs.end(), [&](const auto& v) { return v.name == name; });
  };
  for (const auto& v : model.inputs)
    if (!std::any_of(dump.inputs.begin(), dump.inputs.end(), [&](const auto& in) { return in.first == v.name; }))
      return;  // not matched by name: by position, or refused
  auto drop = [&](TorchFiles& files) {
    std::erase_if(files, [&](const auto& in) { return !is_model_input(in.first); });
  };
  for (const auto& [name, file] : dump.inputs)
    if (!is_model_input(name)) dump.dropped_inputs.push_back(name);
  drop(dump.inputs);
  for (auto& size : dump.sizes) drop(size.inputs);
}

std::string DroppedInputsNote(const TorchDump& dump, const std::string& model_label) {
  if (dump.dropped_inputs.empty()) return "";
  return fmt::format("{}: the dump's input{} '{}' {} not {} of {}: the exporter dropped {} (unused, or traced as a "
                     "constant); {} judged on the inputs it has, matched by name",
                     dump.dir.string(), dump.dropped_inputs.size() == 1 ? "" : "s",
                     fmt::join(dump.dropped_inputs, "', '"), dump.dropped_inputs.size() == 1 ? "is" : "are",
                     dump.dropped_inputs.size() == 1 ? "an input" : "inputs", model_label,
                     dump.dropped_inputs.size() == 1 ? "it" : "them", model_label);
}

Status CheckSomeLayerAligned(const TorchDump& dump, size_t aligned, const std::string& model_label) {
  if (aligned > 0 || dump.layers.empty()) return {};
  return InvalidArgument(fmt::format(
      "{}: none of the dump's {} layers aligns with a tensor of {}: the dump was made from another model",
      dump.dir.string(), dump.layers.size(), model_label));
}

std::string SizeOneHint(const TorchDump& dump) {
  const auto samples = dump.Samples();
  if (samples.size() < 2) return "";
  auto traced = LoadTorchFiles(dump, samples.front().inputs);
  if (!traced) return "";
  std::vector<std::string> axes;
  for (size_t k = 1; k < samples.size(); ++k) {
    auto other = LoadTorchFiles(dump, samples[k].inputs);
    if (!other) continue;
    for (const auto& [name, t] : *traced) {
      const Tensor* o = other->Find(name);
      if (o == nullptr || o->rank() != t.rank()) continue;
      for (int64_t i = 0; i < t.rank(); ++i) {
        const std::string axis = fmt::format("{}[{}]", name, i);
        if (t.shape()[i] == 1 && o->shape()[i] != 1 && std::find(axes.begin(), axes.end(), axis) == axes.end())
          axes.push_back(axis);
      }
    }
  }
  if (axes.empty()) return "";
  return fmt::format("; the traced sample had size 1 at {}: exporters fix dims traced at 1 (torch.export "
                     "specializes 0 and 1, TorchScript folds such shapes into constants); export from a sample "
                     "of size 2 or more there",
                     fmt::join(axes, ", "));
}

}  // namespace parity
