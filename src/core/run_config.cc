#include "core/run_config.h"

#include "core/json_in.h"
#include "core/json_type.h"
#include "core/openvino_properties.h"
#include "core/regular_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>

namespace parity {
namespace {

using nlohmann::json;

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::unexpected<Error> WrongType(std::string_view key, std::string_view expected, const json& got) {
  return InvalidArgument(
      fmt::format("config key '{}': expected {}, got {}", key, expected, JsonTypeName(got)));
}

Result<std::string> GetString(std::string_view key, const json& v) {
  if (!v.is_string()) return WrongType(key, "a string", v);
  return v.get<std::string>();
}

Result<int> GetThreads(std::string_view key, const json& v) {
  if (!v.is_number_integer() && !v.is_number_unsigned()) return WrongType(key, "a non-negative integer", v);
  const int64_t n = v.get<int64_t>();
  if (n < 0 || n > 4096)
    return InvalidArgument(
        fmt::format("config key '{}': expected a non-negative integer up to 4096, got {}", key, n));
  return static_cast<int>(n);
}

Result<std::vector<std::string>> GetStringList(std::string_view key, const json& v) {
  if (!v.is_array()) return WrongType(key, "an array of strings", v);
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return WrongType(fmt::format("{}[{}]", key, i), "a string", v[i]);
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Result<std::map<std::string, std::string>> GetEntries(std::string_view key, const json& v) {
  if (!v.is_object()) return WrongType(key, "an object of string values", v);
  std::map<std::string, std::string> out;
  for (const auto& [k, value] : v.items()) {
    // ORT takes every entry as a string; numbers and booleans are spelled as
    // users expect ("session.intra_op.allow_spinning": 0 means "0").
    if (value.is_string()) {
      out[k] = value.get<std::string>();
    } else if (value.is_boolean()) {
      out[k] = value.get<bool>() ? "1" : "0";
    } else if (value.is_number_integer() || value.is_number_unsigned()) {
      out[k] = std::to_string(value.get<int64_t>());
    } else if (value.is_number_float()) {
      out[k] = fmt::format("{}", value.get<double>());
    } else {
      return WrongType(fmt::format("{}.{}", key, k), "a string, number or boolean", value);
    }
  }
  return out;
}

// "providers": names, or {"name": ..., "options": {...}} objects.
Status GetProviders(const json& v, RunConfig& config) {
  if (!v.is_array()) return WrongType("providers", "an array of names or {\"name\", \"options\"} objects", v);
  config.providers.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string key = fmt::format("providers[{}]", i);
    if (v[i].is_string()) {
      config.providers.push_back(v[i].get<std::string>());
      continue;
    }
    if (!v[i].is_object()) return WrongType(key, "a name or an object", v[i]);
    std::string name;
    for (const auto& [k, value] : v[i].items()) {
      if (k == "name") {
        PARITY_ASSIGN_OR_RETURN(name, GetString(key + ".name", value));
      } else if (k != "options") {
        return InvalidArgument(fmt::format("config key '{}.{}': unknown; expected name or options", key, k));
      }
    }
    if (name.empty()) return InvalidArgument(fmt::format("config key '{}': needs a \"name\"", key));
    if (v[i].contains("options")) {
      PARITY_ASSIGN_OR_RETURN(auto options, GetEntries(key + ".options", v[i]["options"]));
      if (!options.empty()) config.provider_options[name] = std::move(options);
    }
    config.providers.push_back(name);
  }
  if (config.providers.empty())
    return InvalidArgument("config key 'providers': expected at least one execution provider");
  return {};
}

}  // namespace

std::string_view OptLevelName(OptLevel level) {
  switch (level) {
    case OptLevel::kDisable:
      return "disable";
    case OptLevel::kBasic:
      return "basic";
    case OptLevel::kExtended:
      return "extended";
    case OptLevel::kAll:
      return "all";
  }
  return "disable";
}

Result<OptLevel> OptLevelFromName(std::string_view name) {
  const std::string n = Lower(name);
  if (n == "disable" || n == "ort_disable_all" || n == "none") return OptLevel::kDisable;
  if (n == "basic" || n == "ort_enable_basic") return OptLevel::kBasic;
  if (n == "extended" || n == "ort_enable_extended") return OptLevel::kExtended;
  if (n == "all" || n == "ort_enable_all") return OptLevel::kAll;
  return InvalidArgument(
      fmt::format("unknown optimization level '{}'; expected disable, basic, extended or all", name));
}

std::string RunConfig::Label() const {
  std::vector<std::string> parts{std::string(OptLevelName(opt_level))};
  for (const std::string& name : disabled_optimizers) parts.push_back("-" + name);
  if (intra_op_threads != 0) parts.push_back(fmt::format("threads={}", intra_op_threads));
  if (inter_op_threads != 0) parts.push_back(fmt::format("inter_threads={}", inter_op_threads));
  if (parallel_execution) parts.push_back("parallel");
  for (const auto& [key, value] : session_entries) parts.push_back(fmt::format("{}={}", key, value));
  if (providers != std::vector<std::string>{"cpu"}) {
    std::vector<std::string> names;
    for (const std::string& name : providers) {
      auto it = provider_options.find(name);
      if (it == provider_options.end()) {
        names.push_back(name);
        continue;
      }
      std::vector<std::string> kv;
      for (const auto& [key, value] : it->second) kv.push_back(fmt::format("{}={}", key, value));
      names.push_back(fmt::format("{}[{}]", name, fmt::join(kv, ",")));
    }
    parts.push_back(fmt::format("{}", fmt::join(names, ",")));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

namespace {

bool Printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

}  // namespace

int MaxStoredThreads() { return std::max(64, static_cast<int>(std::thread::hardware_concurrency())); }

namespace {

// What a stored config (ConfigOrigin::kStored) may not carry.
Status CheckStored(const RunConfig& config) {
  for (const auto& [key, value] : config.session_entries) {
    if (std::find(std::begin(kStoredSessionConfigKeys), std::end(kStoredSessionConfigKeys), key) ==
        std::end(kStoredSessionConfigKeys))
      return InvalidArgument(fmt::format(
          "config key 'session_config.{}': not allowed in a stored config (baseline manifest, repro "
          "target); only entries that cannot name a file are (docs/security.md); pass it with "
          "--session-config if you mean it",
          Printable(key) ? key : "(unprintable)"));
    if (!Printable(value))
      return InvalidArgument(fmt::format("config key 'session_config.{}': value is not printable ASCII", key));
  }
  for (const auto& [key, threads] : {std::pair{"intra_op_threads", config.intra_op_threads},
                                      std::pair{"inter_op_threads", config.inter_op_threads}})
    if (threads > MaxStoredThreads())
      return InvalidArgument(fmt::format(
          "config key '{}': {} threads in a stored config (baseline manifest, repro target), above the cap of {} "
          "(this machine's cores, at least 64); pass --threads if you mean it",
          key, threads, MaxStoredThreads()));
  for (const std::string& name : config.disabled_optimizers)
    if (!Printable(name) || name.find(';') != std::string::npos)
      return InvalidArgument("config key 'disable_optimizers': a name is not printable ASCII or holds ';'");
  for (const std::string& name : config.providers)
    if (!Printable(name)) return InvalidArgument("config key 'providers': a name is not printable ASCII");
  for (const auto& [name, options] : config.provider_options)
    for (const auto& [key, value] : options) {
      const bool known = std::find(std::begin(kStoredProviderOptionKeys), std::end(kStoredProviderOptionKeys),
                                   key) != std::end(kStoredProviderOptionKeys);
      if (!known || !Printable(value) || (key == "load_config" && !value.starts_with("{")))
        return InvalidArgument(fmt::format(
            "config key 'providers' ({} option '{}'): not allowed in a stored config (baseline manifest, repro "
            "target); only options that cannot name a file are (docs/security.md)",
            Printable(name) ? name : "(unprintable)", Printable(key) ? key : "(unprintable)"));
      if (key == "load_config") PARITY_RETURN_IF_ERROR(CheckStoredLoadConfig(value));
    }
  return {};
}

}  // namespace

Result<RunConfig> RunConfigFromJson(const json& j, ConfigOrigin origin) {
  if (!j.is_object())
    return InvalidArgument(fmt::format("config: expected a JSON object, got {}", JsonTypeName(j)));
  RunConfig config;
  for (const auto& [key, value] : j.items()) {
    if (key == "opt") {
      PARITY_ASSIGN_OR_RETURN(std::string name, GetString(key, value));
      PARITY_ASSIGN_OR_RETURN(config.opt_level, WithContext(OptLevelFromName(name), "config key 'opt'"));
    } else if (key == "providers") {
      PARITY_RETURN_IF_ERROR(GetProviders(value, config));
    } else if (key == "intra_op_threads") {
      PARITY_ASSIGN_OR_RETURN(config.intra_op_threads, GetThreads(key, value));
    } else if (key == "inter_op_threads") {
      PARITY_ASSIGN_OR_RETURN(config.inter_op_threads, GetThreads(key, value));
    } else if (key == "execution_mode") {
      PARITY_ASSIGN_OR_RETURN(std::string mode, GetString(key, value));
      const std::string m = Lower(mode);
      if (m != "sequential" && m != "parallel")
        return InvalidArgument(fmt::format(
            "config key 'execution_mode': expected \"sequential\" or \"parallel\", got \"{}\"", mode));
      config.parallel_execution = m == "parallel";
    } else if (key == "disable_optimizers") {
      PARITY_ASSIGN_OR_RETURN(config.disabled_optimizers, GetStringList(key, value));
    } else if (key == "session_config") {
      PARITY_ASSIGN_OR_RETURN(config.session_entries, GetEntries(key, value));
    } else if (key == "optimized_model_path") {
      if (origin == ConfigOrigin::kStored)
        return InvalidArgument(
            "config key 'optimized_model_path': a stored config (baseline manifest, repro target) may not "
            "name a file to write (docs/security.md)");
      PARITY_ASSIGN_OR_RETURN(config.optimized_model_path, GetString(key, value));
    } else if (key == "ort_library") {
      // A library is code that runs: a config that travels may not name one.
      if (origin == ConfigOrigin::kStored)
        return InvalidArgument(
            "config key 'ort_library': a stored config (baseline manifest, repro target) may not name a "
            "library to load (docs/security.md)");
      PARITY_ASSIGN_OR_RETURN(config.ort_library, GetString(key, value));
    } else {
      return InvalidArgument(fmt::format(
          "unknown config key '{}'; expected one of opt, providers, intra_op_threads, inter_op_threads, "
          "execution_mode, disable_optimizers, session_config, optimized_model_path, ort_library",
          key));
    }
  }
  if (origin == ConfigOrigin::kStored) PARITY_RETURN_IF_ERROR(CheckStored(config));
  return config;
}

json RunConfigToJson(const RunConfig& config) {
  json providers = json::array();
  for (const std::string& name : config.providers) {
    auto it = config.provider_options.find(name);
    if (it == config.provider_options.end()) {
      providers.push_back(name);
    } else {
      providers.push_back({{"name", name}, {"options", it->second}});
    }
  }
  json j = {
      {"opt", std::string(OptLevelName(config.opt_level))},
      {"providers", providers},
      {"intra_op_threads", config.intra_op_threads},
      {"inter_op_threads", config.inter_op_threads},
      {"execution_mode", config.parallel_execution ? "parallel" : "sequential"},
      {"disable_optimizers", config.disabled_optimizers},
      {"session_config", json::object()},
  };
  for (const auto& [key, value] : config.session_entries) j["session_config"][key] = value;
  if (!config.optimized_model_path.empty()) j["optimized_model_path"] = config.optimized_model_path;
  if (!config.ort_library.empty()) j["ort_library"] = config.ort_library;
  return j;
}

Result<RunConfig> LoadRunConfig(const std::string& path, ConfigOrigin origin) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, kMaxConfigBytes));
  PARITY_ASSIGN_OR_RETURN(json j, ParseJsonBounded(text, path));
  return WithContext(RunConfigFromJson(j, origin), path);
}

}  // namespace parity
