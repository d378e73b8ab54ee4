#include "engine/run/environment_json.h"

namespace parity {

namespace {

nlohmann::json EnvironmentCore(const Environment& e) {
  return {{"parity_version", e.parity_version}, {"ort_version", e.ort_version},
          {"onnx_version", e.onnx_version},     {"compiler", e.compiler},
          {"providers", e.providers},           {"cpu", e.cpu},
          {"cpu_count", e.cpu_count},           {"os", e.os},
          {"memory_bytes", e.memory_bytes},     {"hostname", e.hostname}};
}

}  // namespace

nlohmann::json OrtToJson(const OrtFact& o) {
  return {{"version", o.version}, {"library", o.library}, {"origin", o.origin}};
}

nlohmann::json EnvironmentToJson(const Environment& e) {
  nlohmann::json libraries = nlohmann::json::array();
  for (const EpLibraryFact& l : e.ep_libraries)
    libraries.push_back({{"name", l.name}, {"path", l.path}, {"origin", l.origin}});
  nlohmann::json devices = nlohmann::json::array();
  for (const EpDeviceFact& d : e.ep_devices)
    devices.push_back({{"ep_name", d.ep_name},
                       {"ep_vendor", d.ep_vendor},
                       {"device_type", d.device_type},
                       {"library", d.library},
                       {"capabilities", d.capabilities}});
  nlohmann::json j = EnvironmentCore(e);
  j["ort_library"] = e.ort_library;
  j["ort_origin"] = e.ort_origin;
  j["ep_libraries"] = libraries;
  j["ep_devices"] = devices;
  if (!e.ep_error.empty()) j["ep_error"] = e.ep_error;
  return j;
}


}  // namespace parity
