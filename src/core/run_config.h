// How a model is run (docs/contract.md (""config"")): ORT graph optimization level,
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
  std::vector<std::string> providers = {"cpu"};  // "cpu", "cuda", "tensorrt", "openvino", ...
  // Options per provider, keyed by the name as written in `providers`
  // ("openvino" -> {"load_config": "{...}"}); ORT takes every value as a string.
  std::map<std::string, std::map<std::string, std::string>> provider_options;
  int intra_op_threads = 0;                      // 0: ORT's default
  int inter_op_threads = 0;
  bool parallel_execution = false;                     // ORT_PARALLEL vs ORT_SEQUENTIAL
  std::vector<std::string> disabled_optimizers;        // optimization.disable_specified_optimizers
  std::map<std::string, std::string> session_entries;  // any other session config entry
  std::string optimized_model_path;                    // where ORT saves its optimized graph; empty: none
  // The libonnxruntime this config runs on ("ort_library"); empty: the
  // process's (--ort-library, PARITY_ORT_LIBRARY, bundled). Another one than
  // the process's runs in a child process (engine/runner/runner.h).
  std::string ort_library;

  // A short label: "all", "disable", "all -BiasGeluFusion threads=1 cuda".
  std::string Label() const;
  bool operator==(const RunConfig&) const = default;
};

// Where a JSON config comes from (docs/security.md). kUser: a file the user
// named with --config, which may ask ORT to write files (optimized_model_path,
// any session entry). kStored: a config inside a file that travels between
// people and that parity wrote itself (a baseline manifest's "config", a
// repro's target.json given as --target/--reference): it may not name a path
// or a session entry that writes or reads a file; its session_config keys
// must be in kStoredSessionConfigKeys and its names printable ASCII.
enum class ConfigOrigin { kUser, kStored };

// Session config entries a stored config may carry: each only changes how
// ORT computes (threads, spinning, denormals, fusion switches), none names a file.
// Provider options a stored config may carry (as with session entries: none
// names a file; OpenVINO's load_config only as inline JSON, starting with '{').
inline constexpr std::string_view kStoredProviderOptionKeys[] = {
    "device_type", "precision", "num_of_threads", "num_streams", "load_config", "enable_qdq_optimizer",
    "disable_dynamic_shapes", "device_id", "cudnn_conv_algo_search", "use_tf32", "do_copy_in_default_stream",
};

inline constexpr std::string_view kStoredSessionConfigKeys[] = {
    "session.intra_op.allow_spinning",
    "session.inter_op.allow_spinning",
    "session.set_denormal_as_zero",
    "session.disable_prepacking",
    "session.use_env_allocators",
    "session.disable_cpu_ep_fallback",
    "session.qdqisint8allowed",
    "session.enable_quant_qdq_cleanup",
    "session.disable_quant_qdq",
    "session.disable_double_qdq_remover",
    "session.disable_aot_function_inlining",
    "session.x64quantprecision",
    "session.strict_shape_type_inference",
    "session.allow_released_opsets_only",
    "session.dynamic_block_base",
    "optimization.enable_gelu_approximation",
    "optimization.disable_specified_optimizers",
    "mlas.enable_gemm_fastmath_arm64_bfloat16",
};

// The most intra- or inter-op threads a stored config (ConfigOrigin::kStored:
// a baseline manifest, a repro target) may ask for: this machine's cores, at
// least 64. A manifest edited to 4096 threads made `baseline verify` spend
// minutes creating threads for a one-node model (issue 29).
int MaxStoredThreads();

// JSON form (the --config file):
// {"opt": "all", "providers": ["cpu"], "intra_op_threads": 1, "inter_op_threads": 0,
//  "execution_mode": "sequential"|"parallel", "disable_optimizers": ["BiasGeluFusion"],
//  "session_config": {"key": "value"}, "optimized_model_path": "opt.onnx",
//  "ort_library": "/path/libonnxruntime.so.1.31.1"}
// A "providers" element is a name or {"name": "openvino", "options": {"load_config": "..."}}
// (option values: strings, numbers or booleans, as session_config's).
// Every key is optional (defaults as in RunConfig). session_config values may
// be strings, numbers or booleans (ORT takes them as strings). Unknown keys and
// wrong types are kInvalidArgument errors naming the key and the expected type.
Result<RunConfig> RunConfigFromJson(const nlohmann::json& j, ConfigOrigin origin = ConfigOrigin::kUser);
nlohmann::json RunConfigToJson(const RunConfig& config);
// Reads a JSON file (a regular file of at most kMaxConfigBytes); errors name
// the file (kNotFound when it does not exist, kInvalidArgument for malformed
// JSON, a bad key, or a FIFO/device/oversized file).
Result<RunConfig> LoadRunConfig(const std::string& path, ConfigOrigin origin = ConfigOrigin::kUser);

}  // namespace parity
