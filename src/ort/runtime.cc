#include "ort/runtime.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <unordered_map>

#include "ort/ort_env.h"
#include "ort/ort_library.h"

namespace parity::ort {
namespace {

std::atomic<bool> g_console_logging{false};
std::atomic<uint64_t> g_next_capture_id{1};

// Active captures by log id. Leaked on purpose: ORT may log while the process
// exits, after function-local statics would have been destroyed.
struct CaptureRegistry {
  std::mutex mutex;
  std::unordered_map<std::string, LogCapture*> by_log_id;
};
CaptureRegistry& Registry() {
  static auto* registry = new CaptureRegistry();
  return *registry;
}

char SeverityLetter(OrtLoggingLevel severity) {
  switch (severity) {
    case ORT_LOGGING_LEVEL_VERBOSE:
      return 'V';
    case ORT_LOGGING_LEVEL_INFO:
      return 'I';
    case ORT_LOGGING_LEVEL_WARNING:
      return 'W';
    case ORT_LOGGING_LEVEL_ERROR:
      return 'E';
    case ORT_LOGGING_LEVEL_FATAL:
      return 'F';
  }
  return '?';
}

void ORT_API_CALL LogCallback(void* /*param*/, OrtLoggingLevel severity, const char* /*category*/,
                              const char* logid, const char* code_location, const char* message) {
  if (logid != nullptr && message != nullptr) {
    CaptureRegistry& registry = Registry();
    std::lock_guard lock(registry.mutex);
    auto it = registry.by_log_id.find(logid);
    if (it != registry.by_log_id.end()) it->second->Append(message);
  }
  if (g_console_logging.load(std::memory_order_relaxed)) {
    std::fprintf(stderr, "[ORT %c %s %s] %s\n", SeverityLetter(severity), logid ? logid : "",
                 code_location ? code_location : "", message ? message : "");
  }
}

}  // namespace

Ort::Env& GlobalEnv() {
  // Leaked like the registry, so no session can outlive it at exit. C++
  // guarantees the initialisation runs once even under concurrent first use.
  OrtApiOrThrow();
  static Ort::Env* env = new Ort::Env(ORT_LOGGING_LEVEL_WARNING, "parity", LogCallback, nullptr);
  return *env;
}

LogCapture::LogCapture(const std::string& prefix)
    : log_id_(fmt::format("{}#{}", prefix, g_next_capture_id.fetch_add(1))) {
  CaptureRegistry& registry = Registry();
  std::lock_guard lock(registry.mutex);
  registry.by_log_id[log_id_] = this;
}

LogCapture::~LogCapture() {
  CaptureRegistry& registry = Registry();
  std::lock_guard lock(registry.mutex);
  registry.by_log_id.erase(log_id_);
}

std::vector<std::string> LogCapture::TakeLines() {
  std::lock_guard lock(mutex_);
  return std::exchange(lines_, {});
}

void LogCapture::Append(const char* message) {
  std::lock_guard lock(mutex_);
  lines_.emplace_back(message);
}

std::string OrtVersion() {
  auto lib = LoadedOrtLibrary();
  return lib ? lib->version : "";
}

std::string OrtLibraryPath() {
  auto lib = LoadedOrtLibrary();
  return lib ? lib->path : "";
}

std::vector<std::string> AvailableProviders() {
  try {
    OrtApiOrThrow();
    return Ort::GetAvailableProviders();
  } catch (const Ort::Exception&) {
    return {"CPUExecutionProvider"};  // CPU is always compiled in
  }
}

void SetConsoleLogging(bool enabled) { g_console_logging.store(enabled); }
bool ConsoleLoggingEnabled() { return g_console_logging.load(); }

}  // namespace parity::ort
