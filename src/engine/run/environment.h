// What machine and software a run happened on: parity, ORT and ONNX versions,
// compiler, execution providers, CPU, OS, memory. Recorded in every report
// and baseline manifest so that a difference can be explained later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace parity {

struct Environment {
  std::string parity_version;
  std::string ort_version;
  std::string onnx_version;
  std::string compiler;
  std::vector<std::string> providers;
  std::string cpu;
  int cpu_count = 0;
  std::string os;
  int64_t memory_bytes = 0;
  std::string hostname;
};

// Collects the facts once; cheap after the first call. Thread-safe.
// Its JSON form: EnvironmentToJson (engine/run/environment_json.h).
const Environment& CurrentEnvironment();

}  // namespace parity
