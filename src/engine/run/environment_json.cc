#include "engine/run/environment_json.h"

namespace parity {

nlohmann::json EnvironmentToJson(const Environment& e) {
  return {{"parity_version", e.parity_version}, {"ort_version", e.ort_version},
          {"onnx_version", e.onnx_version},     {"compiler", e.compiler},
          {"providers", e.providers},           {"cpu", e.cpu},
          {"cpu_count", e.cpu_count},           {"os", e.os},
          {"memory_bytes", e.memory_bytes},     {"hostname", e.hostname}};
}

}  // namespace parity
