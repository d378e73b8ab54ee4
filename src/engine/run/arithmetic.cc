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

// Above this e no rounding is named even where the config runs one: a
// different computation (bf16 through a deep network stays below it).
constexpr double kTooLargeForRounding = 0.125;

double UnitRoundoff(const std::string& format) {
  if (format == "bf16") return std::ldexp(1.0, -8);
  if (format == "fp16" || format == "tf32") return std::ldexp(1.0, -11);
  return 0;
}

// The config's own evidence: the format the EP runs float32 in by default.
bool FromConfig(ArithmeticVerdict& v, const RunConfig& target, const Environment& env) {
  if (Has(target, "openvino")) {
    const std::string load_config = Option(target, "openvino", "load_config");
    const bool f32_hint = load_config.find("INFERENCE_PRECISION_HINT") != std::string::npos &&
                          load_config.find("f32") != std::string::npos;
    if (f32_hint || !OpenVinoCpuHasBf16(env)) return false;
    v.arithmetic = "bf16";
    v.evidence = "the target's config runs it: OpenVINO's CPU EP device lists BF16 and no f32 hint is given";
    v.cause =
        "OpenVINO's CPU plugin defaults to bf16 inference precision (INFERENCE_PRECISION_HINT=bf16) on a CPU "
        "with BF16 (its EP device lists it); the provider option 'precision' does not change it";
    v.fix = fmt::format("run f32 with --provider-option 'openvino:load_config={}' (config JSON: "
                        "\"providers\": [{{\"name\": \"openvino\", \"options\": {{\"load_config\": ...}}}}])",
                        kOpenVinoF32);
    return true;
  }
  if (Has(target, "cuda") && Option(target, "cuda", "use_tf32") != "0") {
    v.arithmetic = "tf32";
    v.evidence = "the target's config runs it: the CUDA EP without use_tf32=0";
    v.cause = "the CUDA EP runs float32 MatMul/Conv as TF32 on Ampere and newer GPUs by default (use_tf32=1)";
    v.fix = "run fp32 with --provider-option cuda:use_tf32=0";
    return true;
  }
  return false;
}

}  // namespace

bool ConfigCanCompute(std::string_view format, const RunConfig& target) {
  for (const std::string& ep : target.providers) {
    if (ep == "cpu") {
      const auto fastmath = target.session_entries.find("mlas.enable_gemm_fastmath_arm64_bfloat16");
      if (format == "bf16" && fastmath != target.session_entries.end() && fastmath->second == "1") return true;
      continue;
    }
    if (ep == "cuda") {
      if (format == "tf32") return true;
      continue;
    }
    return true;  // an EP parity does not know to compute float32 only
  }
  return false;
}

std::optional<ArithmeticVerdict> DiagnoseArithmetic(const ArithmeticEvidence& e, const RunConfig& target,
                                                    const Environment& env) {
  if (!std::isfinite(e.snr_db)) return std::nullopt;
  ArithmeticVerdict v;
  v.relative_error = std::pow(10.0, -e.snr_db / 20.0);
  if (!e.derived.empty()) {
    v.arithmetic = e.derived == "fp16" ? "fp16 model" : "int8 quantization";
    v.evidence = fmt::format("the target is a derived {} model: its error is its {}, not a rounding of the config",
                             e.derived, e.derived == "fp16" ? "float16 conversion" : "quantization");
    return v;
  }
  // Another model's error is the models' difference: no rounding is named,
  // and no local fault of the config either.
  if (e.model_differs) return std::nullopt;
  if (v.relative_error < kTooLargeForRounding && FromConfig(v, target, env)) {
    v.unit_roundoff = UnitRoundoff(v.arithmetic);
    return v;
  }
  if (e.emulation && e.emulation->Reproduces() && v.relative_error < kTooLargeForRounding &&
      ConfigCanCompute(e.emulation->format, target)) {
    const EmulationEvidence& m = *e.emulation;
    v.arithmetic = m.format;
    v.unit_roundoff = UnitRoundoff(m.format);
    v.evidence = fmt::format("the reference re-run with {} rounding emulated reproduces the target's error on {} of "
                             "{} tensors (median ratio {:.2g})",
                             m.format, m.reproduced, m.compared, m.median_ratio);
    return v;
  }
  if (!e.local_node.empty()) {
    v.arithmetic = "local fault";
    v.node = e.local_node;
    v.evidence = fmt::format("the error starts at node '{}'{}: every tensor before it agrees at float32's level",
                             e.local_node,
                             e.local_fused_node.empty() ? "" : fmt::format(" (fused node '{}')", e.local_fused_node));
    return v;
  }
  return std::nullopt;
}

std::string ArithmeticLine(const ArithmeticVerdict& v) {
  std::string line;
  if (v.unit_roundoff > 0) {
    line = fmt::format("errors consistent with {} arithmetic (normwise relative error {:.2e}; {} unit roundoff "
                       "2^{} = {:.1e}): {}",
                       v.arithmetic, v.relative_error, v.arithmetic,
                       static_cast<int>(std::lround(std::log2(v.unit_roundoff))), v.unit_roundoff, v.evidence);
  } else if (!v.node.empty()) {
    line = fmt::format("a local fault at node '{}', not a rounding (normwise relative error {:.2e}): {}", v.node,
                       v.relative_error, v.evidence);
  } else {
    line = fmt::format("{} (normwise relative error {:.2e}): {}", v.arithmetic, v.relative_error, v.evidence);
  }
  if (!v.cause.empty()) line += ": likely cause: " + v.cause;
  if (!v.fix.empty()) line += "; " + v.fix;
  return line;
}

}  // namespace parity
