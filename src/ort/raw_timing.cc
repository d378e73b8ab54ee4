// Session::TimeRawRuns: the plain ORT C++ loop parity's own latency numbers
// are checked against (bench/latency_bench.cc). Inputs are wrapped once,
// output names fixed once; only Ort::Session::Run is inside the clock.
#include <fmt/format.h>

#include <chrono>

#include "ort/ort_error.h"
#include "ort/run_count.h"
#include "ort/session.h"
#include "ort/session_impl.h"
#include "ort/value_conversion.h"

namespace parity::ort {

Result<std::vector<double>> Session::TimeRawRuns(const TensorSet& inputs, int runs) const {
  if (runs < 0) return InvalidArgument(fmt::format("raw runs must be >= 0, got {}", runs));
  PARITY_RETURN_IF_ERROR(CheckInputs(impl_->inputs, inputs));
  try {
    std::vector<const char*> input_ptrs;
    std::vector<Ort::Value> values;
    for (const TensorInfo& info : impl_->inputs) {
      PARITY_ASSIGN_OR_RETURN(Ort::Value value, ToOrtValue(*inputs.Find(info.name)));
      input_ptrs.push_back(info.name.c_str());
      values.push_back(std::move(value));
    }
    std::vector<const char*> output_ptrs;
    for (const TensorInfo& info : impl_->outputs) output_ptrs.push_back(info.name.c_str());
    Ort::RunOptions run_options{nullptr};
    std::vector<double> ms;
    ms.reserve(static_cast<size_t>(runs));
    CountOrtRuns(runs);
    for (int i = 0; i < runs; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<Ort::Value> results =
          impl_->session.Run(run_options, input_ptrs.data(), values.data(), values.size(), output_ptrs.data(),
                             output_ptrs.size());
      const auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    return ms;
  } catch (const Ort::Exception& e) {
    return std::unexpected(FromOrtException(e, OrtStage::kRun));
  } catch (const std::exception& e) {
    return RuntimeError(fmt::format("running the ORT session: {}", e.what()));
  }
}

}  // namespace parity::ort
