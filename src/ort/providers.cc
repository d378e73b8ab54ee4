#include "ort/providers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

#include "ort/ort_providers.h"

#include "ort/ep_libraries.h"
#include "ort/ort_env.h"
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

namespace {

using Options = std::map<std::string, std::string>;

// A built-in provider (compiled into this ORT, or a provider-bridge library
// beside it, as onnxruntime-gpu's CUDA).
void AppendBuiltIn(Ort::SessionOptions& options, const ProviderEntry& e, const Options& values, bool cpu_last) {
  if (e.short_name == "cpu") {
    // ORT appends CPU as the last fallback by itself; registering it
    // explicitly only matters when it should win over a later provider.
    if (!cpu_last) AppendCpuProvider(options, /*use_arena=*/1);
  } else if (e.short_name == "cuda") {
    // device_id, cudnn_conv_algo_search, use_tf32, ...: ORT parses them.
    Ort::CUDAProviderOptions cuda;
    if (!values.empty()) cuda.Update(std::unordered_map<std::string, std::string>(values.begin(), values.end()));
    options.AppendExecutionProvider_CUDA_V2(*cuda);
  } else if (e.short_name == "tensorrt") {
    Ort::TensorRTProviderOptions trt;
    if (!values.empty()) trt.Update(std::unordered_map<std::string, std::string>(values.begin(), values.end()));
    options.AppendExecutionProvider_TensorRT_V2(*trt);
  } else {
    options.AppendExecutionProvider(std::string(e.generic_name),
                                    std::unordered_map<std::string, std::string>(values.begin(), values.end()));
  }
}

// The EP devices that serve `name` (ORT's EP name, or a plugin library's
// registration name); empty when none does.
std::vector<Ort::ConstEpDevice> PluginDevices(const std::string& name, const std::string& ort_name) {
  std::vector<std::string> ep_names{ort_name};
  for (const std::string& n : EpNamesOfLibrary(name))
    if (n.find('.') == std::string::npos) ep_names.push_back(n);  // "X.AUTO": a meta device, by its full name only
  std::vector<Ort::ConstEpDevice> devices;
  for (const Ort::ConstEpDevice& d : GlobalEnv().GetEpDevices())
    if (std::find(ep_names.begin(), ep_names.end(), d.EpName()) != ep_names.end() &&
        (devices.empty() || devices.front().EpName() == std::string_view(d.EpName())))
      devices.push_back(d);
  return devices;
}

std::string PluginList() {
  std::set<std::string> names;
  for (const Ort::ConstEpDevice& d : GlobalEnv().GetEpDevices()) names.insert(d.EpName());
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

Status AppendProviders(Ort::SessionOptions& options, const RunConfig& config) {
  const std::vector<std::string> available = AvailableProviders();
  const std::vector<std::string>& providers = config.providers;
  // Resolve and check every name before registering any.
  std::vector<std::pair<const ProviderEntry*, std::vector<Ort::ConstEpDevice>>> resolved;
  for (const std::string& name : providers) {
    const ProviderEntry* e = FindEntry(name);
    const std::string ort_name = e != nullptr ? std::string(e->ort_name) : name;
    if (std::find(available.begin(), available.end(), ort_name) != available.end()) {
      resolved.emplace_back(e, std::vector<Ort::ConstEpDevice>{});
      continue;
    }
    PARITY_RETURN_IF_ERROR(RegisterEpLibrariesFor(e != nullptr ? std::string(e->short_name) : name));
    std::vector<Ort::ConstEpDevice> devices = PluginDevices(name, ort_name);
    if (!devices.empty()) {
      resolved.emplace_back(nullptr, std::move(devices));
      continue;
    }
    if (e == nullptr)
      return InvalidArgument(fmt::format(
          "unknown execution provider '{}'; known: {}; plugin EPs registered: {} (add one with --ep-library "
          "NAME=PATH)",
          name, fmt::join(KnownProviderNames(), ", "), PluginList()));
    return Unsupported(fmt::format(
        "execution provider '{}' ({}) is not available in this ONNX Runtime build nor from a plugin EP library; "
        "available: {}; plugin EPs: {} (add one with --ep-library NAME=PATH)",
        name, e->ort_name, AvailableList(), PluginList()));
  }
  for (const auto& [name, values] : config.provider_options)
    if (std::find(providers.begin(), providers.end(), name) == providers.end())
      return InvalidArgument(fmt::format("provider options for '{}', which is not among the providers ({})", name,
                                         fmt::join(providers, ", ")));
  for (size_t i = 0; i < resolved.size(); ++i) {
    auto it = config.provider_options.find(providers[i]);
    const Options values = it == config.provider_options.end() ? Options{} : it->second;
    const auto& [entry, devices] = resolved[i];
    if (!devices.empty()) {
      options.AppendExecutionProvider_V2(GlobalEnv(), devices,
                                         std::unordered_map<std::string, std::string>(values.begin(), values.end()));
    } else if (entry->short_name == "cpu" || entry->short_name == "cuda" || entry->short_name == "tensorrt" ||
               !entry->generic_name.empty()) {
      if (entry->short_name == "cpu" && !values.empty())
        return InvalidArgument("the CPU execution provider takes no provider options");
      AppendBuiltIn(options, *entry, values, i + 1 == resolved.size());
    } else {
      return Unsupported(fmt::format("execution provider '{}' is available but parity cannot register it yet",
                                     entry->short_name));
    }
  }
  return {};
}

}  // namespace parity::ort
