#include "engine/run/environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "core/build_info.h"
#include "ort/ep_libraries.h"
#include "ort/ort_library.h"
#include "ort/runtime.h"

namespace parity {
namespace {

std::string ReadCpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

std::string ReadOs() {
  std::ifstream in("/etc/os-release");
  std::string line, pretty;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      pretty = line.substr(12);
      if (pretty.size() >= 2 && pretty.front() == '"') pretty = pretty.substr(1, pretty.size() - 2);
    }
  }
  utsname u{};
  if (uname(&u) == 0) pretty += std::string(pretty.empty() ? "" : ", ") + u.sysname + " " + u.release + " " + u.machine;
  return pretty;
}

Environment Collect() {
  Environment e;
  e.parity_version = PARITY_VERSION;
  const OrtFact ort = CurrentOrt();
  e.ort_version = ort.version;
  e.ort_library = ort.library;
  e.ort_origin = ort.origin;
  e.onnx_version = PARITY_ONNX_VERSION;
  e.compiler = PARITY_COMPILER;
  e.providers = ort::AvailableProviders();
  for (const ort::EpLibrary& lib : ort::EpLibraries()) e.ep_libraries.push_back({lib.name, lib.path, lib.origin});
  if (auto devices = ort::EpDevices()) {
    for (const ort::EpDeviceInfo& d : *devices) {
      auto caps = d.metadata.find("OPTIMIZATION_CAPABILITIES");
      e.ep_devices.push_back({d.ep_name, d.ep_vendor, d.device_type, d.library,
                              caps == d.metadata.end() ? "" : caps->second});
    }
  } else {
    e.ep_error = devices.error().message();
  }
  e.cpu = ReadCpuModel();
  e.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
  e.os = ReadOs();
  e.memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) e.hostname = host;
  return e;
}

}  // namespace

const Environment& CurrentEnvironment() {
  static const Environment env = Collect();
  return env;
}

}  // namespace parity
