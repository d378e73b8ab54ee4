// The model an ORT reference runs (reference.h), and the questions whose
// answer depends on whether it is the target's own model or a second one:
// a kModel reference's --reference-model, which the target was derived from
// (simplified, fp16, quantized, patched), else the target's own model at the
// reference's config. A command loads it once and asks it for the models,
// files and labels locate and the runners need, instead of testing the kind
// (tests/house/test_reference_kinds.py).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/load/reference.h"
#include "onnx/model.h"

namespace parity {

class ReferenceModel {
 public:
  ReferenceModel() = default;  // the target's own model
  ReferenceModel(Model model, std::string path) : model_(std::move(model)), path_(std::move(path)) {}
  // Loads a kModel reference's file (Model::Load's error); else the target's own.
  static Result<ReferenceModel> Load(const Reference& r);

  // The model the reference runs: its own, else `target`.
  const Model& Of(const Model& target) const;
  // `target` as the model derived from the reference that locate compares
  // with it (its second model); null when the reference runs `target` itself.
  const Model* DerivedFrom(const Model& target) const;
  // The reference's model's path for messages: its own, else `target_label`.
  const std::string& Label(const std::string& target_label) const;
  // locate's target_label: `target_label` when the target is a second model, else "".
  std::string TargetLabel(const std::string& target_label) const;
  // Each model the reference and the target run, once: the reference's own
  // then `target`, or `target` alone.
  std::vector<const Model*> Models(const Model& target) const;
  // The loaded reference model, null when the reference runs the target's
  // own (DatasetEvaluator::Create's argument).
  const Model* Loaded() const { return model_ ? &*model_ : nullptr; }
  // A report's reference model path: its own, else empty.
  const std::string& ReportPath() const { return path_; }
  // Whether the reference and the target are two models (their inputs are
  // cast to each model's dtypes, their outputs compared in the reference's;
  // a derived model's bands; locate's model difference).
  bool ModelsDiffer() const { return model_.has_value(); }

 private:
  std::optional<Model> model_;
  std::string path_;
};

// The file the reference runs: a kModel reference's model, else `target`.
std::filesystem::path ReferenceFile(const Reference& r, const std::filesystem::path& target);
// The reference's role beside the target in a fix's costs: "float" for the
// model a derived copy was made from, else "reference" (the target at another config).
std::string_view ReferenceRole(const Reference& r);
// Whether the target was derived from the reference's model (a kModel
// reference): parity fix then re-derives the copy instead of changing the config.
bool TargetDerivedFrom(const Reference& r);
// Stored reference outputs (check --dataset --reference-outputs) are the
// reference: a reference model beside them is the user's mistake
// (kInvalidArgument naming `command`).
Status RequireOneReference(const Reference& r, const std::filesystem::path& stored_outputs,
                           std::string_view command);

// Runs `on_dump(dir)` for a PyTorch dump reference, else `on_ort()` (a
// config or a model, run in ONNX Runtime): a command that can take either
// does its part for the one it was given without testing which.
template <class OnDump, class OnOrt>
auto ForReference(const Reference& r, OnDump&& on_dump, OnOrt&& on_ort) {
  if (const std::filesystem::path* dir = r.torch_dump()) return on_dump(*dir);
  return on_ort();
}

}  // namespace parity
