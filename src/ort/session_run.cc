// Session::Run: input checks, Tensor -> Ort::Value without copying, the ORT
// call, and outputs copied back into parity Tensors (or wrapped, borrowed).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "ort/ort_error.h"
#include "ort/run_count.h"
#include "ort/run_limits.h"
#include "ort/session.h"
#include "ort/session_impl.h"
#include "ort/value_conversion.h"
#include "ort/watchdog.h"

namespace parity::ort {

bool IsRunTimeout(const Error& e) { return e.message().find(kRunTimedOut) != std::string::npos; }

Result<TensorSet> Session::Run(const TensorSet& inputs, const std::vector<std::string>& output_names,
                               OutputBuffers buffers, double timeout_s) const {
  PARITY_RETURN_IF_ERROR(CheckInputs(impl_->inputs, inputs));

  std::vector<std::string> fetch = output_names.empty() ? this->output_names() : output_names;
  for (const std::string& name : fetch) {
    bool known = false;
    for (const TensorInfo& info : impl_->outputs) known = known || info.name == name;
    if (!known)
      return InvalidArgument(fmt::format("unknown output '{}' (model outputs: {})", name,
                                         fmt::join(this->output_names(), ", ")));
  }

  try {
    // Feed in the model's input order; `inputs` may list them in any order.
    std::vector<const char*> input_ptrs;
    std::vector<Ort::Value> values;
    for (const TensorInfo& info : impl_->inputs) {
      PARITY_ASSIGN_OR_RETURN(Ort::Value value, WithContext(ToOrtValue(*inputs.Find(info.name)),
                                                            fmt::format("input '{}'", info.name)));
      input_ptrs.push_back(info.name.c_str());
      values.push_back(std::move(value));
    }
    std::vector<const char*> output_ptrs;
    for (const std::string& name : fetch) output_ptrs.push_back(name.c_str());

    std::vector<Ort::Value> results;
    CountOrtRuns(1);
    PARITY_RETURN_IF_ERROR(RunUnderLimits(timeout_s, [&](const Ort::RunOptions& options) {
      results = impl_->session.Run(options, input_ptrs.data(), values.data(), values.size(), output_ptrs.data(),
                                   output_ptrs.size());
    }));
    TensorSet out;
    for (size_t i = 0; i < results.size(); ++i) {
      // Copied, ORT's buffer goes as soon as parity holds its own: a run that
      // fetches every tensor (the layers against PyTorch) holds one copy, not
      // two. Borrowed, there is no second copy at all.
      PARITY_ASSIGN_OR_RETURN(
          Tensor t, WithContext(buffers == OutputBuffers::kBorrowed
                                    ? AdoptOrtValue(std::move(results[i]), impl_)
                                    : FromOrtValue(std::exchange(results[i], Ort::Value(nullptr))),
                                fmt::format("output '{}'", fetch[i])));
      PARITY_RETURN_IF_ERROR(out.Add(fetch[i], std::move(t)));
    }
    return out;
  } catch (const Ort::Exception& e) {
    return std::unexpected(FromOrtException(e, OrtStage::kRun));
  } catch (const std::exception& e) {
    return RuntimeError(fmt::format("running the ORT session: {}", e.what()));
  }
}

}  // namespace parity::ort
