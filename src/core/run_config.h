// How a model is run (SPEC.md "config"): ORT graph optimization level,
// execution providers, threads, execution mode, optimizers switched off by
// name and any other session config entries. Plain data; the ORT adapter
// (src/ort/) turns it into session options.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace parity {

enum class OptLevel { kDisable, kBasic, kExtended, kAll };

std::string_view OptLevelName(OptLevel level);  // "disable", "basic", "extended", "all"
// Also accepts ORT's names ("ORT_ENABLE_ALL", "ORT_DISABLE_ALL"), any case.
Result<OptLevel> OptLevelFromName(std::string_view name);

struct RunConfig {
  OptLevel opt_level = OptLevel::kDisable;
  std::vector<std::string> providers = {"cpu"};  // "cpu", "cuda", "tensorrt", ...
  int intra_op_threads = 0;                      // 0: ORT's default
  int inter_op_threads = 0;
  bool parallel_execution = false;                     // ORT_PARALLEL vs ORT_SEQUENTIAL
  std::vector<std::string> disabled_optimizers;        // optimization.disable_specified_optimizers
  std::map<std::string, std::string> session_entries;  // any other session config entry
  std::string optimized_model_path;                    // where ORT saves its optimized graph; empty: none

  // A short label: "all", "disable", "all -BiasGeluFusion threads=1 cuda".
  std::string Label() const;
};

// JSON form (the --config file):
// {"opt": "all", "providers": ["cpu"], "intra_op_threads": 1, "inter_op_threads": 0,
//  "execution_mode": "sequential"|"parallel", "disable_optimizers": ["BiasGeluFusion"],
//  "session_config": {"key": "value"}, "optimized_model_path": "opt.onnx"}
// Every key is optional (defaults as in RunConfig). session_config values may
// be strings, numbers or booleans (ORT takes them as strings). Unknown keys and
// wrong types are kInvalidArgument errors naming the key and the expected type.
Result<RunConfig> RunConfigFromJson(const nlohmann::json& j);
nlohmann::json RunConfigToJson(const RunConfig& config);
// Reads a JSON file; errors name the file (kNotFound when it cannot be read,
// kInvalidArgument for malformed JSON or a bad key).
Result<RunConfig> LoadRunConfig(const std::string& path);

}  // namespace parity
