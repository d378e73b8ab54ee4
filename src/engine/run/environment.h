// What machine and software a run happened on: parity, ORT and ONNX versions,
// compiler, execution providers, CPU, OS, memory. Recorded in every report
// and baseline manifest so that a difference can be explained later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/runner/ort_fact.h"

namespace parity {

// A plugin EP library parity registers (ort/ep_libraries.h), and the EP
// devices of the process's ORT environment.
struct EpLibraryFact {
  std::string name, path, origin;
};
struct EpDeviceFact {
  std::string ep_name, ep_vendor, device_type, library;
  std::string capabilities;  // OPTIMIZATION_CAPABILITIES when the EP says ("BF16 FP32 FP16 ..."), else empty
};

// Which ONNX Runtime ran: OrtFact, CurrentOrt (engine/runner/ort_fact.h).
// Empty strings when no ORT could be loaded.

struct Environment {
  std::string parity_version;
  std::string ort_version;
  std::string ort_library;  // the libonnxruntime file that ran
  std::string ort_origin;   // how it was chosen (OrtFact::origin)
  std::vector<EpLibraryFact> ep_libraries;
  std::vector<EpDeviceFact> ep_devices;
  std::string ep_error;  // a plugin library that failed to register, else empty
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
