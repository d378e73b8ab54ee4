#include "engine/load/reference_model.h"

#include <fmt/format.h>

namespace parity {

Result<ReferenceModel> ReferenceModel::Load(const Reference& r) {
  const std::filesystem::path* file = r.model_file();
  if (file == nullptr) return ReferenceModel();
  PARITY_ASSIGN_OR_RETURN(Model model, Model::Load(file->string()));
  return ReferenceModel(std::move(model), file->string());
}

const Model& ReferenceModel::Of(const Model& target) const { return model_ ? *model_ : target; }

const Model* ReferenceModel::DerivedFrom(const Model& target) const { return model_ ? &target : nullptr; }

const std::string& ReferenceModel::Label(const std::string& target_label) const {
  return model_ ? path_ : target_label;
}

std::vector<const Model*> ReferenceModel::Models(const Model& target) const {
  if (model_) return {&*model_, &target};
  return {&target};
}

std::string ReferenceModel::TargetLabel(const std::string& target_label) const {
  return model_ ? target_label : std::string();
}

std::filesystem::path ReferenceFile(const Reference& r, const std::filesystem::path& target) {
  const std::filesystem::path* file = r.model_file();
  return file != nullptr ? *file : target;
}

std::string_view ReferenceRole(const Reference& r) { return TargetDerivedFrom(r) ? "float" : "reference"; }

bool TargetDerivedFrom(const Reference& r) { return r.model_file() != nullptr; }

Status RequireOneReference(const Reference& r, const std::filesystem::path& stored_outputs,
                           std::string_view command) {
  if (!stored_outputs.empty() && r.model_file() != nullptr)
    return InvalidArgument(
        fmt::format("{}: --reference-outputs is the reference; give no --reference-model with it", command));
  return {};
}

}  // namespace parity
