// The OpenVINO properties a stored config (a baseline manifest's config, a
// repro's target.json) may carry in the OpenVINO EP's `load_config`: an
// allowlist of properties that steer numerics and scheduling, none of which
// names a file or a folder (CACHE_DIR had OpenVINO write compiled blobs
// wherever a stored config said; docs/security.md, third review).
#pragma once

#include <string_view>

#include "core/status.h"

namespace parity {

inline constexpr std::string_view kStoredOpenVinoProperties[] = {
    "INFERENCE_PRECISION_HINT", "PERFORMANCE_HINT",        "PERFORMANCE_HINT_NUM_REQUESTS",
    "NUM_STREAMS",              "INFERENCE_NUM_THREADS",   "EXECUTION_MODE_HINT",
    "ENABLE_CPU_PINNING",       "ENABLE_HYPER_THREADING",  "SCHEDULING_CORE_TYPE",
    "KV_CACHE_PRECISION",       "DYNAMIC_QUANTIZATION_GROUP_SIZE", "MODEL_PRIORITY",
};

// `value` (load_config's text) must be a JSON object of devices ("CPU",
// "GPU.0": printable, no '/'), each an object of allowed properties whose
// values are strings (printable ASCII), numbers or booleans; kInvalidArgument
// naming the device and the property otherwise.
Status CheckStoredLoadConfig(std::string_view value);

}  // namespace parity
