// BoundSession: Ort::IoBinding over a session of its own (session_impl.h's
// SessionCore, loaded as Session::Create loads one).
#include "ort/io_binding.h"

#include <fmt/format.h>

#include "ort/ort_error.h"
#include "ort/run_count.h"
#include "ort/session_impl.h"
#include "ort/value_conversion.h"
#include "ort/watchdog.h"

namespace parity::ort {

Result<BoundSession> BoundSession::Create(const ModelSource& model, const RunConfig& config) {
  PARITY_RETURN_IF_ERROR(PrepareOrt());
  auto core = std::make_shared<SessionCore>();
  PARITY_RETURN_IF_ERROR(LoadSessionCore(*core, model, config, {}));
  return BoundSession(std::move(core));
}

BoundSession::BoundSession(std::shared_ptr<SessionCore> core) : core_(std::move(core)) {}
BoundSession::BoundSession(BoundSession&&) noexcept = default;
BoundSession& BoundSession::operator=(BoundSession&&) noexcept = default;
BoundSession::~BoundSession() = default;

const std::vector<TensorInfo>& BoundSession::inputs() const { return core_->inputs; }
const std::vector<TensorInfo>& BoundSession::outputs() const { return core_->outputs; }

std::vector<std::string> BoundSession::input_names() const {
  std::vector<std::string> names;
  for (const TensorInfo& info : core_->inputs) names.push_back(info.name);
  return names;
}

std::vector<std::string> BoundSession::output_names() const {
  std::vector<std::string> names;
  for (const TensorInfo& info : core_->outputs) names.push_back(info.name);
  return names;
}

Result<TensorSet> BoundSession::Run(const TensorSet& inputs, const TensorSet& into) const {
  PARITY_RETURN_IF_ERROR(CheckInputs(core_->inputs, inputs));
  for (const auto& [name, tensor] : into) {
    bool known = false;
    for (const TensorInfo& info : core_->outputs) known = known || info.name == name;
    if (!known) return InvalidArgument(fmt::format("a buffer bound to '{}', which is no output of the model", name));
  }
  try {
    Ort::IoBinding binding(core_->session);
    // The bound values wrap parity's buffers (no copy); they must outlive the run.
    std::vector<Ort::Value> held;
    held.reserve(core_->inputs.size() + into.size());
    for (const TensorInfo& info : core_->inputs) {
      PARITY_ASSIGN_OR_RETURN(Ort::Value v, WithContext(ToOrtValue(*inputs.Find(info.name)),
                                                        fmt::format("input '{}'", info.name)));
      binding.BindInput(info.name.c_str(), v);
      held.push_back(std::move(v));
    }
    const Ort::MemoryInfo cpu = Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);
    for (const TensorInfo& info : core_->outputs) {
      if (const Tensor* buffer = into.Find(info.name)) {
        PARITY_ASSIGN_OR_RETURN(Ort::Value v, WithContext(ToOrtValue(*buffer), fmt::format("output '{}'", info.name)));
        binding.BindOutput(info.name.c_str(), v);
        held.push_back(std::move(v));
      } else {
        binding.BindOutput(info.name.c_str(), cpu);
      }
    }
    CountOrtRuns(1);
    PARITY_RETURN_IF_ERROR(RunUnderLimits(0, [&](const Ort::RunOptions& options) {
      core_->session.Run(options, binding);
    }));
    std::vector<Ort::Value> values = binding.GetOutputValues();
    TensorSet out;
    for (size_t i = 0; i < core_->outputs.size() && i < values.size(); ++i) {
      const std::string& name = core_->outputs[i].name;
      if (const Tensor* buffer = into.Find(name)) {
        PARITY_RETURN_IF_ERROR(out.Add(name, *buffer));
        continue;
      }
      PARITY_ASSIGN_OR_RETURN(Tensor t, WithContext(AdoptOrtValue(std::move(values[i]), core_),
                                                    fmt::format("output '{}'", name)));
      PARITY_RETURN_IF_ERROR(out.Add(name, std::move(t)));
    }
    return out;
  } catch (const Ort::Exception& e) {
    return std::unexpected(FromOrtException(e, OrtStage::kRun));
  } catch (const std::exception& e) {
    return RuntimeError(fmt::format("running the IO-bound ORT session: {}", e.what()));
  }
}

}  // namespace parity::ort
