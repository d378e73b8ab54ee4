// Loads libonnxruntime at run time (ort_library.h). Written here rather than
// taken from a library: it is dlopen, dlsym and one call of ORT's documented
// entry point OrtGetApiBase, then Ort::InitApi (the C++ wrapper's manual
// initialisation, ORT_API_MANUAL_INIT, set for every file of src/ort/).
#include "ort/ort_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

#include "core/library_file.h"
#include "ort/ort_env.h"

namespace parity::ort {
namespace {

constexpr const char* kBundledSoname = "libonnxruntime.so.1";

struct LoadState {
  std::mutex mutex;
  std::optional<OrtLibraryInfo> info;  // set once an ORT is loaded
  std::optional<Error> error;          // the failed default load, repeated to later callers
  void* handle = nullptr;
  const OrtApi* api = nullptr;
};

LoadState& State() {
  static auto* state = new LoadState();  // leaked: ORT is never unloaded
  return *state;
}

// "1.31.1" -> 31; -1 when the string is not MAJOR.MINOR...
int MinorOf(const std::string& version) {
  int major = -1, minor = -1;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2 || major < 1) return -1;
  return major > 1 ? INT_MAX : minor;
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::canonical(path, ec);
  return ec ? path : p.string();
}

std::unexpected<Error> Bad(const std::string& origin, const std::string& path, const std::string& what) {
  return InvalidArgument(fmt::format("{} {}: {}", origin, path, what));
}

// Opens `path` (a file, or the bundled soname found by the rpath when
// `by_soname`) and checks it serves parity's C API version.
Status LoadLocked(LoadState& s, const std::string& path, const std::string& origin, bool by_soname) {
  std::string to_open = path;
  if (!by_soname) {
    std::error_code ec;
    if (path.empty()) return InvalidArgument(fmt::format("{}: an empty path", origin));
    if (!std::filesystem::exists(path, ec)) return Bad(origin, path, "no such file");
    if (std::filesystem::is_directory(path, ec)) return Bad(origin, path, "a directory, not an ONNX Runtime library");
    // A FIFO would block dlopen, a truncated copy fault in it (SIGBUS).
    if (Status ok = CheckLibraryFile(path); !ok)
      return InvalidArgument(fmt::format("{} {}", origin, ok.error().message()));
    if (path.find('/') == std::string::npos) to_open = "./" + path;  // a file, never a search
  }
  // ORT's POSIX telemetry (official builds from 1.29 on) creates a
  // /tmp/mat-debug-<pid>.log and an offline cache under ~/.cache for every
  // process and costs ~50 ms of each start (7 % of a ResNet-50 baseline
  // here); parity's runs are not a deployment's. Off, unless the user set
  // ORT_DISABLE_TELEMETRY (ORT reads it once, when it initializes).
  ::setenv("ORT_DISABLE_TELEMETRY", "1", /*overwrite=*/0);
  dlerror();
  void* handle = dlopen(to_open.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    if (by_soname)
      return RuntimeError(fmt::format("the bundled ONNX Runtime ({}) could not be loaded ({}); reinstall parity, or name "
                               "one with --ort-library PATH",
                               kBundledSoname, why ? why : "dlopen failed"));
    return Bad(origin, path, fmt::format("not a shared library ({})", why ? why : "dlopen failed"));
  }
  using GetApiBaseFn = const OrtApiBase* (*)();
  auto get_base = reinterpret_cast<GetApiBaseFn>(dlsym(handle, "OrtGetApiBase"));
  const OrtApiBase* base = get_base != nullptr ? get_base() : nullptr;
  if (base == nullptr) {
    dlclose(handle);
    return Bad(origin, path, "not an ONNX Runtime library (it has no OrtGetApiBase)");
  }
  const std::string version = base->GetVersionString ? base->GetVersionString() : "";
  // Asked only of a library new enough: an older one prints to stderr first.
  const int minor = MinorOf(version);
  const OrtApi* api = minor >= ORT_API_VERSION ? base->GetApi(ORT_API_VERSION) : nullptr;
  if (api == nullptr)
    return Bad(origin, path,
               fmt::format("ONNX Runtime {} is older than parity needs (C API version {}: ONNX Runtime 1.{} or newer)",
                           version.empty() ? "of unknown version" : version, ORT_API_VERSION, ORT_API_VERSION));
  Dl_info where{};
  std::string file = path;
  if (dladdr(reinterpret_cast<const void*>(get_base), &where) != 0 && where.dli_fname != nullptr)
    file = where.dli_fname;
  Ort::InitApi(api);
  s.handle = handle;
  s.api = api;
  s.info = OrtLibraryInfo{version, Canonical(file), origin, ORT_API_VERSION};
  return {};
}

Status LoadDefaultLocked(LoadState& s) {
  if (s.info) return {};
  if (s.error) return std::unexpected(*s.error);
  const char* env = std::getenv("PARITY_ORT_LIBRARY");
  Status loaded = env != nullptr && *env != '\0' ? LoadLocked(s, env, "PARITY_ORT_LIBRARY", false)
                                                 : LoadLocked(s, kBundledSoname, "bundled", true);
  if (!loaded) s.error = loaded.error();
  return loaded;
}

}  // namespace

Status SelectOrtLibrary(const std::string& path, const std::string& origin) {
  LoadState& s = State();
  std::lock_guard lock(s.mutex);
  if (s.info) {
    if (Canonical(path) == s.info->path) return {};
    return Bad(origin, path,
               fmt::format("ONNX Runtime {} from {} is already loaded (one ONNX Runtime per process)", s.info->version,
                           s.info->path));
  }
  Status loaded = LoadLocked(s, path, origin, false);
  if (loaded) s.error.reset();
  return loaded;
}

Result<OrtLibraryInfo> LoadedOrtLibrary() {
  LoadState& s = State();
  std::lock_guard lock(s.mutex);
  PARITY_RETURN_IF_ERROR(LoadDefaultLocked(s));
  return *s.info;
}

int RequiredOrtApiVersion() { return ORT_API_VERSION; }

const OrtApi& OrtApiOrThrow() {
  LoadState& s = State();
  std::lock_guard lock(s.mutex);
  if (Status loaded = LoadDefaultLocked(s); !loaded)
    throw Ort::Exception(std::string(loaded.error().message()),
                         loaded.error().code() == ErrorCode::kInvalidArgument ? ORT_INVALID_ARGUMENT : ORT_FAIL);
  return *s.api;
}

void AppendCpuProvider(Ort::SessionOptions& options, int use_arena) {
  OrtApiOrThrow();
  using AppendFn = OrtStatus* (*)(OrtSessionOptions*, int);
  auto append = reinterpret_cast<AppendFn>(dlsym(State().handle, "OrtSessionOptionsAppendExecutionProvider_CPU"));
  if (append == nullptr) throw Ort::Exception("this ONNX Runtime has no OrtSessionOptionsAppendExecutionProvider_CPU",
                                              ORT_NOT_IMPLEMENTED);
  Ort::ThrowOnError(append(options, use_arena));
}

}  // namespace parity::ort
