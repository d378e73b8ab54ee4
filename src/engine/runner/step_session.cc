#include "engine/runner/step_session.h"

#include <fmt/format.h>

namespace parity {

std::string_view CacheFormName(CacheForm form) {
  switch (form) {
    case CacheForm::kAuto: return "auto";
    case CacheForm::kFresh: return "fresh";
    case CacheForm::kBound: return "bound";
    case CacheForm::kShared: return "shared";
  }
  return "auto";
}

Result<CacheForm> ParseCacheForm(std::string_view name) {
  for (CacheForm f : {CacheForm::kAuto, CacheForm::kFresh, CacheForm::kBound, CacheForm::kShared})
    if (CacheFormName(f) == name) return f;
  return InvalidArgument(fmt::format("--cache-form {}: expected auto, fresh, bound or shared", name));
}

namespace {

const ort::TensorInfo* Info(const std::vector<ort::TensorInfo>& infos, const std::string& name) {
  for (const auto& i : infos)
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace

bool LooksShared(const std::vector<ort::TensorInfo>& inputs, const std::vector<ort::TensorInfo>& outputs,
                 const CachePairs& kv) {
  if (kv.empty()) return false;
  for (const auto& [past_name, present_name] : kv) {
    const ort::TensorInfo* past = Info(inputs, past_name);
    const ort::TensorInfo* present = Info(outputs, present_name);
    if (!past || !present || !past->rank_known || !present->rank_known || past->shape.size() < 3 ||
        past->shape != present->shape || past->dim_names != present->dim_names)
      return false;
    if (past->shape[past->shape.size() - 2] <= 0) return false;  // the length: static, not empty
  }
  return true;
}

Result<StepSession> StepSession::Open(const std::string& path, const RunConfig& config, CacheForm form,
                                      const CachePairs& kv) {
  StepSession s;
  const ort::ModelSource model = ort::ModelSource::FromFile(path);
  if (form == CacheForm::kAuto || form == CacheForm::kFresh) {
    PARITY_ASSIGN_OR_RETURN(ort::Session plain, ort::Session::Create(model, config));
    s.plain_.emplace(std::move(plain));
    s.form_ = CacheForm::kFresh;
    if (form == CacheForm::kFresh || !LooksShared(s.plain_->inputs(), s.plain_->outputs(), kv)) {
      s.detected_ = form == CacheForm::kAuto;
      return s;
    }
    s.plain_.reset();  // one session alive at a time
    form = CacheForm::kShared;
    s.detected_ = true;
  }
  PARITY_ASSIGN_OR_RETURN(ort::BoundSession bound, ort::BoundSession::Create(model, config));
  s.bound_.emplace(std::move(bound));
  s.form_ = form;
  return s;
}

const std::vector<ort::TensorInfo>& StepSession::inputs() const {
  return plain_ ? plain_->inputs() : bound_->inputs();
}
const std::vector<ort::TensorInfo>& StepSession::outputs() const {
  return plain_ ? plain_->outputs() : bound_->outputs();
}
std::vector<std::string> StepSession::input_names() const {
  return plain_ ? plain_->input_names() : bound_->input_names();
}
std::vector<std::string> StepSession::output_names() const {
  return plain_ ? plain_->output_names() : bound_->output_names();
}

Result<TensorSet> StepSession::Run(const TensorSet& inputs) const {
  if (plain_) return plain_->Run(inputs, {}, ort::OutputBuffers::kBorrowed);
  return bound_->Run(inputs);
}

Result<TensorSet> StepSession::RunInto(const TensorSet& inputs, const TensorSet& into) const {
  if (!bound_) return Unsupported("bound outputs on a session of the fresh cache form");
  return bound_->Run(inputs, into);
}

}  // namespace parity
