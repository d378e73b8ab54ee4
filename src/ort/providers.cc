#include "ort/providers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "ort/ort_providers.h"

// Declares OrtSessionOptionsAppendExecutionProvider_CPU, which
// SessionOptions::AppendExecutionProvider_CPU calls.
#include <cpu_provider_factory.h>

#include "ort/runtime.h"

namespace parity::ort {
namespace {

struct ProviderEntry {
  std::string_view short_name;
  std::string_view ort_name;
  // The name OrtApi::SessionOptionsAppendExecutionProvider takes; empty when
  // the provider has its own append function or none parity can call.
  std::string_view generic_name;
};

constexpr ProviderEntry kProviders[] = {
    {"cpu", "CPUExecutionProvider", ""},
    {"cuda", "CUDAExecutionProvider", ""},
    {"tensorrt", "TensorrtExecutionProvider", ""},
    {"rocm", "ROCMExecutionProvider", ""},
    {"migraphx", "MIGraphXExecutionProvider", ""},
    {"dnnl", "DnnlExecutionProvider", ""},
    {"openvino", "OpenVINOExecutionProvider", "OpenVINO"},
    {"xnnpack", "XnnpackExecutionProvider", "XNNPACK"},
    {"qnn", "QNNExecutionProvider", "QNN"},
    {"coreml", "CoreMLExecutionProvider", "CoreML"},
    {"webgpu", "WebGpuExecutionProvider", "WebGPU"},
    {"dml", "DmlExecutionProvider", "DML"},
    {"vitisai", "VitisAIExecutionProvider", "VitisAI"},
    {"azure", "AzureExecutionProvider", "AZURE"},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

const ProviderEntry* FindEntry(std::string_view name) {
  const std::string lower = Lower(name);
  for (const ProviderEntry& e : kProviders)
    if (lower == e.short_name || lower == Lower(e.ort_name)) return &e;
  return nullptr;
}

std::string AvailableList() {
  std::vector<std::string> names;
  for (const std::string& ort_name : AvailableProviders())
    names.push_back(fmt::format("{} ({})", ProviderShortName(ort_name), ort_name));
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::optional<std::string> ProviderOrtName(std::string_view name) {
  const ProviderEntry* e = FindEntry(name);
  if (e == nullptr) return std::nullopt;
  return std::string(e->ort_name);
}

std::string ProviderShortName(std::string_view ort_name) {
  for (const ProviderEntry& e : kProviders)
    if (e.ort_name == ort_name) return std::string(e.short_name);
  return std::string(ort_name);
}

std::vector<std::string> KnownProviderNames() {
  std::vector<std::string> names;
  for (const ProviderEntry& e : kProviders) names.emplace_back(e.short_name);
  return names;
}

Status AppendProviders(Ort::SessionOptions& options, const std::vector<std::string>& providers) {
  const std::vector<std::string> available = AvailableProviders();
  // Resolve and check every name before registering any.
  std::vector<const ProviderEntry*> entries;
  for (const std::string& name : providers) {
    const ProviderEntry* e = FindEntry(name);
    if (e == nullptr)
      return InvalidArgument(fmt::format("unknown execution provider '{}'; known: {}", name,
                                         fmt::join(KnownProviderNames(), ", ")));
    if (std::find(available.begin(), available.end(), e->ort_name) == available.end())
      return Unsupported(
          fmt::format("execution provider '{}' ({}) is not available in this ONNX Runtime build; "
                      "available: {}",
                      name, e->ort_name, AvailableList()));
    entries.push_back(e);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const ProviderEntry& e = *entries[i];
    if (e.short_name == "cpu") {
      // ORT appends CPU as the last fallback by itself; registering it
      // explicitly only matters when it should win over a later provider.
      if (i + 1 < entries.size()) options.AppendExecutionProvider_CPU(/*use_arena=*/1);
    } else if (e.short_name == "cuda") {
      Ort::CUDAProviderOptions cuda;
      options.AppendExecutionProvider_CUDA_V2(*cuda);
    } else if (e.short_name == "tensorrt") {
      Ort::TensorRTProviderOptions trt;
      options.AppendExecutionProvider_TensorRT_V2(*trt);
    } else if (!e.generic_name.empty()) {
      options.AppendExecutionProvider(std::string(e.generic_name));
    } else {
      return Unsupported(fmt::format("execution provider '{}' is available but parity cannot register it yet",
                                     e.short_name));
    }
  }
  return {};
}

}  // namespace parity::ort
