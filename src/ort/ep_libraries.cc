#include "ort/ep_libraries.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include "ort/ort_env.h"
#include "ort/ort_providers.h"

namespace parity::ort {
namespace {

namespace fs = std::filesystem;

struct LibraryState {
  std::mutex mutex;
  std::vector<EpLibrary> added;                  // AddEpLibrary, in order
  std::map<std::string, std::string> registered;  // name -> path, once registered
  // EP names each registered library brought (a plugin may bring several).
  std::map<std::string, std::vector<std::string>> ep_names_by_library;
};
LibraryState& State() {
  static auto* state = new LibraryState();  // leaked like the Ort::Env it feeds
  return *state;
}

// libonnxruntime_providers_openvino_plugin.so -> "openvino".
std::string NameFromFile(const fs::path& path) {
  std::string stem = path.filename().string();
  for (std::string_view prefix : {"libonnxruntime_providers_", "onnxruntime_providers_", "lib"})
    if (stem.starts_with(prefix)) {
      stem = stem.substr(prefix.size());
      break;
    }
  if (auto dot = stem.find('.'); dot != std::string::npos) stem.resize(dot);
  if (stem.ends_with("_plugin")) stem.resize(stem.size() - 7);
  return stem;
}

// Site-packages folders of the Python environment parity belongs to.
std::vector<fs::path> SitePackages() {
  std::vector<fs::path> roots;  // folders holding lib/python3.*/site-packages
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv != nullptr && *venv) roots.emplace_back(venv);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> out;
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      if (dir.filename() == "site-packages") out.push_back(dir);
      roots.push_back(dir / ".venv");
    }
  }
  for (const fs::path& root : roots) {
    for (const fs::directory_entry& lib : fs::directory_iterator(root / "lib", ec)) {
      const fs::path sp = lib.path() / "site-packages";
      if (lib.path().filename().string().starts_with("python") && fs::is_directory(sp, ec)) out.push_back(sp);
    }
  }
  return out;
}

std::vector<EpLibrary> DiscoverInPython() {
  std::vector<EpLibrary> found;
  std::error_code ec;
  for (const fs::path& sp : SitePackages()) {
    for (const fs::directory_entry& pkg : fs::directory_iterator(sp, ec)) {
      const std::string pkg_name = pkg.path().filename().string();
      if (!pkg_name.starts_with("onnxruntime_ep_") || !pkg.is_directory(ec)) continue;
      for (const fs::directory_entry& file : fs::directory_iterator(pkg.path(), ec)) {
        const std::string f = file.path().filename().string();
        if (f.starts_with("libonnxruntime_providers_") && f.ends_with("_plugin.so"))
          found.push_back({pkg_name.substr(15), file.path().string(), "python package " + pkg_name});
      }
    }
  }
  return found;
}

std::vector<EpLibrary> FromEnvironmentVariable() {
  std::vector<EpLibrary> out;
  const char* value = std::getenv("PARITY_EP_LIBRARY");
  if (value == nullptr) return out;
  std::string_view rest(value);
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view entry = rest.substr(0, colon);
    if (auto lib = ParseEpLibrary(entry, "PARITY_EP_LIBRARY")) out.push_back(*lib);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return out;
}

std::set<std::string> EpNamesNow(Ort::Env& env) {
  std::set<std::string> names;
  for (const Ort::ConstEpDevice& d : env.GetEpDevices()) names.insert(d.EpName());
  return names;
}

std::string DeviceTypeName(OrtHardwareDeviceType type) {
  switch (type) {
    case OrtHardwareDeviceType_CPU:
      return "cpu";
    case OrtHardwareDeviceType_GPU:
      return "gpu";
    case OrtHardwareDeviceType_NPU:
      return "npu";
  }
  return "unknown";
}

}  // namespace

Result<EpLibrary> ParseEpLibrary(std::string_view spec, std::string_view origin) {
  const size_t eq = spec.find('=');
  EpLibrary lib{.origin = std::string(origin)};
  if (eq == std::string_view::npos) {
    lib.path = std::string(spec);
    lib.name = NameFromFile(lib.path);
  } else {
    lib.name = std::string(spec.substr(0, eq));
    lib.path = std::string(spec.substr(eq + 1));
  }
  if (lib.name.empty() || lib.path.empty())
    return InvalidArgument(fmt::format("{} '{}': expected NAME=PATH (a plugin EP library)", origin, spec));
  return lib;
}

void AddEpLibrary(EpLibrary library) {
  LibraryState& s = State();
  std::lock_guard lock(s.mutex);
  std::erase_if(s.added, [&](const EpLibrary& l) { return l.name == library.name; });
  s.added.push_back(std::move(library));
}

std::vector<EpLibrary> EpLibraries() {
  std::vector<EpLibrary> all;
  {
    LibraryState& s = State();
    std::lock_guard lock(s.mutex);
    all = s.added;
  }
  std::vector<EpLibrary> more = FromEnvironmentVariable();
  const char* discovery = std::getenv("PARITY_EP_DISCOVERY");
  if (discovery == nullptr || std::string_view(discovery) != "0") {
    std::vector<EpLibrary> python = DiscoverInPython();
    more.insert(more.end(), python.begin(), python.end());
  }
  for (EpLibrary& lib : more)
    if (std::none_of(all.begin(), all.end(), [&](const EpLibrary& l) { return l.name == lib.name; }))
      all.push_back(std::move(lib));
  return all;
}

Status RegisterEpLibraries() {
  const std::vector<EpLibrary> libraries = EpLibraries();
  LibraryState& s = State();
  std::lock_guard lock(s.mutex);
  for (const EpLibrary& lib : libraries) {
    if (s.registered.contains(lib.name)) continue;
    std::error_code ec;
    if (!fs::is_regular_file(lib.path, ec))
      return InvalidArgument(fmt::format("plugin EP library '{}' ({}): {} is not a file", lib.name, lib.origin,
                                         lib.path));
    try {
      Ort::Env& env = GlobalEnv();
      const std::set<std::string> before = EpNamesNow(env);
      env.RegisterExecutionProviderLibrary(lib.name.c_str(), lib.path);
      std::vector<std::string>& brought = s.ep_names_by_library[lib.name];
      for (const std::string& name : EpNamesNow(env))
        if (!before.contains(name)) brought.push_back(name);
    } catch (const Ort::Exception& e) {
      return InvalidArgument(fmt::format("plugin EP library '{}' ({}, {}): ONNX Runtime cannot load it: {}",
                                         lib.name, lib.origin, lib.path, e.what()));
    }
    s.registered[lib.name] = lib.path;
  }
  return {};
}

std::vector<std::string> EpNamesOfLibrary(const std::string& name) {
  LibraryState& s = State();
  std::lock_guard lock(s.mutex);
  auto it = s.ep_names_by_library.find(name);
  return it == s.ep_names_by_library.end() ? std::vector<std::string>{} : it->second;
}

Result<std::vector<EpDeviceInfo>> EpDevices() {
  PARITY_RETURN_IF_ERROR(RegisterEpLibraries());
  std::vector<EpDeviceInfo> out;
  try {
    for (const Ort::ConstEpDevice& d : GlobalEnv().GetEpDevices()) {
      EpDeviceInfo info{.ep_name = d.EpName(), .ep_vendor = d.EpVendor(),
                        .device_type = DeviceTypeName(d.Device().Type()), .device_vendor = d.Device().Vendor()};
      LibraryState& s = State();
      std::lock_guard lock(s.mutex);
      for (const auto& [library, names] : s.ep_names_by_library)
        if (std::find(names.begin(), names.end(), info.ep_name) != names.end()) info.library = library;
      for (const auto& [key, value] : d.EpMetadata().GetKeyValuePairs()) info.metadata[key] = value;
      out.push_back(std::move(info));
    }
  } catch (const Ort::Exception& e) {
    return RuntimeError(fmt::format("listing ORT's EP devices: {}", e.what()));
  }
  return out;
}

}  // namespace parity::ort
