#include "engine/run/arithmetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace parity {
namespace {

constexpr char kOpenVinoF32[] = R"({"CPU":{"INFERENCE_PRECISION_HINT":"f32"}})";

bool Has(const RunConfig& c, std::string_view provider) {
  return std::any_of(c.providers.begin(), c.providers.end(), [&](const std::string& p) {
    std::string lower(p);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    return lower == provider || lower == std::string(provider) + "executionprovider";
  });
}

std::string Option(const RunConfig& c, const std::string& provider, const std::string& key) {
  for (const auto& [name, options] : c.provider_options) {
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (lower != provider && lower != provider + "executionprovider") continue;
    if (auto it = options.find(key); it != options.end()) return it->second;
  }
  return "";
}

bool OpenVinoCpuHasBf16(const Environment& env) {
  return std::any_of(env.ep_devices.begin(), env.ep_devices.end(), [](const EpDeviceFact& d) {
    return d.ep_name.starts_with("OpenVINO") && d.device_type == "cpu" &&
           d.capabilities.find("BF16") != std::string::npos;
  });
}

void NameCause(ArithmeticVerdict& v, const RunConfig& target, const Environment& env) {
  const bool low = v.arithmetic == "bf16" || v.arithmetic == "fp16/tf32" || v.arithmetic == "worse than bf16";
  if (!low) return;
  if (Has(target, "openvino")) {
    const std::string load_config = Option(target, "openvino", "load_config");
    const bool f32_hint = load_config.find("INFERENCE_PRECISION_HINT") != std::string::npos &&
                          load_config.find("f32") != std::string::npos;
    if (!f32_hint && OpenVinoCpuHasBf16(env)) {
      v.cause =
          "OpenVINO's CPU plugin defaults to bf16 inference precision (INFERENCE_PRECISION_HINT=bf16) on a CPU "
          "with BF16 (its EP device lists it); the provider option 'precision' does not change it";
      v.fix = fmt::format("run f32 with --provider-option 'openvino:load_config={}' (config JSON: "
                          "\"providers\": [{{\"name\": \"openvino\", \"options\": {{\"load_config\": ...}}}}])",
                          kOpenVinoF32);
    }
  } else if (Has(target, "cuda") && Option(target, "cuda", "use_tf32") != "0") {
    v.cause = "the CUDA EP runs float32 MatMul/Conv as TF32 on Ampere and newer GPUs by default (use_tf32=1)";
    v.fix = "run fp32 with --provider-option cuda:use_tf32=0";
  }
}

}  // namespace

std::optional<ArithmeticVerdict> DiagnoseArithmetic(double snr_db, const RunConfig& target, const Environment& env) {
  if (!std::isfinite(snr_db)) return std::nullopt;
  ArithmeticVerdict v;
  v.relative_error = std::pow(10.0, -snr_db / 20.0);
  const double e = v.relative_error;
  if (e >= std::ldexp(1.0, -5)) {
    v.arithmetic = "worse than bf16";
  } else if (e >= std::ldexp(1.0, -13)) {
    v.arithmetic = "bf16";
    v.unit_roundoff = std::ldexp(1.0, -8);
  } else if (e >= std::ldexp(1.0, -17)) {
    v.arithmetic = "fp16/tf32";
    v.unit_roundoff = std::ldexp(1.0, -11);
  } else {
    v.arithmetic = "fp32";
    v.unit_roundoff = std::ldexp(1.0, -24);
  }
  NameCause(v, target, env);
  return v;
}

std::string ArithmeticLine(const ArithmeticVerdict& v) {
  std::string line;
  if (v.unit_roundoff > 0) {
    line = fmt::format("errors consistent with {} arithmetic (normwise relative error {:.2e}; {} unit roundoff "
                       "2^{} = {:.1e})",
                       v.arithmetic, v.relative_error, v.arithmetic,
                       static_cast<int>(std::lround(std::log2(v.unit_roundoff))), v.unit_roundoff);
  } else {
    line = fmt::format("errors worse than bf16 arithmetic (normwise relative error {:.2e}): a different "
                       "computation rather than rounding",
                       v.relative_error);
  }
  if (!v.cause.empty()) line += ": likely cause: " + v.cause;
  if (!v.fix.empty()) line += "; " + v.fix;
  return line;
}

}  // namespace parity
