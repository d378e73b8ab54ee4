#include "ort/ep_libraries.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include "core/library_file.h"
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
LibraryState& LibraryRegistry() {
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

// Whether a discovered folder or file may be trusted: owned by this user or
// by root, and not writable by others (a folder anyone can write is where a
// planted library would lie). Symlinks are followed: a link itself can only
// be replaced by who may write its folder, which is checked on the way.
bool Trusted(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  if (st.st_uid != ::geteuid() && st.st_uid != 0) return false;
  return (st.st_mode & S_IWOTH) == 0;
}

std::vector<EpLibrary> DiscoverInPython() {
  std::vector<EpLibrary> found;
  std::error_code ec;
  const char* venv = std::getenv("VIRTUAL_ENV");
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (const std::string& sp_text : PluginSitePackages(ec ? "" : exe.string(), venv ? venv : "")) {
    const fs::path sp(sp_text);
    if (!Trusted(sp)) continue;
    for (const fs::directory_entry& pkg : fs::directory_iterator(sp, ec)) {
      const std::string pkg_name = pkg.path().filename().string();
      if (!pkg_name.starts_with("onnxruntime_ep_") || !pkg.is_directory(ec) || !Trusted(pkg.path())) continue;
      for (const fs::directory_entry& file : fs::directory_iterator(pkg.path(), ec)) {
        const std::string f = file.path().filename().string();
        if (f.starts_with("libonnxruntime_providers_") && f.ends_with("_plugin.so") && Trusted(file.path()))
          found.push_back({pkg_name.substr(15), file.path().string(), "python package " + pkg_name, true});
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

std::vector<std::string> PluginSitePackages(const std::string& exe, const std::string& virtual_env) {
  std::vector<fs::path> roots;  // environments: folders holding lib/python3.*/site-packages
  if (!virtual_env.empty()) roots.emplace_back(virtual_env);
  std::vector<std::string> out;
  std::error_code ec;
  if (!exe.empty()) {
    const fs::path bin = fs::path(exe).parent_path();
    // A binary in an environment's bin/ (a pyvenv.cfg beside it) belongs to it.
    if (bin.filename() == "bin" && fs::is_regular_file(bin.parent_path() / "pyvenv.cfg", ec))
      roots.push_back(bin.parent_path());
    // A binary installed inside a package: the nearest site-packages above it.
    for (fs::path dir = bin; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
      if (dir.filename() == "site-packages") {
        out.push_back(dir.string());
        break;
      }
  }
  for (const fs::path& root : roots) {
    for (const fs::directory_entry& lib : fs::directory_iterator(root / "lib", ec)) {
      const fs::path sp = lib.path() / "site-packages";
      if (lib.path().filename().string().starts_with("python") && fs::is_directory(sp, ec) &&
          std::find(out.begin(), out.end(), sp.string()) == out.end())
        out.push_back(sp.string());
    }
  }
  return out;
}

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
  // A relative path is the user's, from the working directory: ORT would
  // resolve it against its own library's folder (issue 56, class 11), and a
  // child or a Ray actor runs elsewhere.
  std::error_code ec;
  if (const fs::path p(lib.path); p.is_relative())
    if (fs::path abs = fs::absolute(p, ec); !ec) lib.path = abs.lexically_normal().string();
  return lib;
}

void AddEpLibrary(EpLibrary library) {
  LibraryState& s = LibraryRegistry();
  std::lock_guard lock(s.mutex);
  std::erase_if(s.added, [&](const EpLibrary& l) { return l.name == library.name; });
  s.added.push_back(std::move(library));
}

std::vector<EpLibrary> EpLibraries() {
  std::vector<EpLibrary> all;
  {
    LibraryState& s = LibraryRegistry();
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

std::vector<EpLibrary> EpLibrariesFor(const std::vector<std::string>& providers) {
  std::vector<EpLibrary> out;
  for (EpLibrary& lib : EpLibraries()) {
    const bool named = std::any_of(providers.begin(), providers.end(), [&](const std::string& p) {
      return ProviderLibraryName(p) == lib.name;
    });
    if (!lib.discovered || named) out.push_back(std::move(lib));
  }
  return out;
}

namespace {

Status RegisterLocked(LibraryState& s, const EpLibrary& lib) {
  if (s.registered.contains(lib.name)) return {};
  // A regular file whose ELF headers lie inside it (a FIFO blocks dlopen, a
  // truncated copy faults in it): checked before ORT opens it.
  if (auto ok = CheckLibraryFile(lib.path); !ok)
    return InvalidArgument(fmt::format("plugin EP library '{}' ({}): {}", lib.name, lib.origin, ok.error().message()));
  try {
    Ort::Env& env = GlobalEnv();
    const std::set<std::string> before = EpNamesNow(env);
    env.RegisterExecutionProviderLibrary(lib.name.c_str(), lib.path);
    std::vector<std::string>& brought = s.ep_names_by_library[lib.name];
    for (const std::string& name : EpNamesNow(env))
      if (!before.contains(name)) brought.push_back(name);
  } catch (const Ort::Exception& e) {
    return InvalidArgument(fmt::format("plugin EP library '{}' ({}, {}): ONNX Runtime cannot load it: {}", lib.name,
                                       lib.origin, lib.path, e.what()));
  }
  s.registered[lib.name] = lib.path;
  return {};
}

Status Register(const std::vector<EpLibrary>& libraries) {
  LibraryState& s = LibraryRegistry();
  std::lock_guard lock(s.mutex);
  for (const EpLibrary& lib : libraries) PARITY_RETURN_IF_ERROR(RegisterLocked(s, lib));
  return {};
}

}  // namespace

Status RegisterEpLibraries() { return Register(EpLibrariesFor({})); }

Status RegisterEpLibrariesFor(const std::string& provider) { return Register(EpLibrariesFor({provider})); }

std::string ProviderLibraryName(std::string_view provider) {
  std::string name(provider);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name.ends_with("executionprovider")) name.resize(name.size() - 17);
  return name;
}

std::vector<std::string> EpNamesOfLibrary(const std::string& name) {
  LibraryState& s = LibraryRegistry();
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
      LibraryState& s = LibraryRegistry();
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
