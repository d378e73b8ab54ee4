#include "report/console/env_console.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace parity {

std::string FormatEnvironment(const Environment& e) {
  std::string out;
  out += fmt::format("parity        {}\n", e.parity_version);
  out += fmt::format("onnxruntime   {} ({})\n", e.ort_version, e.ort_library);
  out += fmt::format("onnx          {}\n", e.onnx_version);
  out += fmt::format("compiler      {}\n", e.compiler);
  out += fmt::format("providers     {}\n", fmt::join(e.providers, ", "));
  for (const EpLibraryFact& l : e.ep_libraries)
    out += fmt::format("ep library    {} = {} ({})\n", l.name, l.path, l.origin);
  for (const EpDeviceFact& d : e.ep_devices)
    out += fmt::format("ep device     {} ({}), {}{}{}\n", d.ep_name, d.ep_vendor, d.device_type,
                       d.library.empty() ? "" : ", library " + d.library,
                       d.capabilities.empty() ? "" : ", capabilities " + d.capabilities);
  if (!e.ep_error.empty()) out += fmt::format("ep error      {}\n", e.ep_error);
  out += fmt::format("cpu           {} ({} threads)\n", e.cpu, e.cpu_count);
  out += fmt::format("memory        {:.1f} GiB\n", static_cast<double>(e.memory_bytes) / (1 << 30));
  out += fmt::format("os            {}\n", e.os);
  return out;
}

}  // namespace parity
