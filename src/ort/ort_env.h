// INTERNAL to src/ort/: the process-wide Ort::Env and the capture of ORT log
// lines per session. Includes ORT headers; never include it outside src/ort/.
//
// ORT's logging callback receives no session handle, but it does receive the
// session's log id (OrtApi::SetSessionLogId) as `logid`, on whichever thread
// logs. So a LogCapture registers a process-unique log id; a session created
// with that id and a low log severity has its lines appended to the capture,
// whatever thread ORT logs them from. Lines with any other log id go to the
// console when ConsoleLoggingEnabled(), else nowhere.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <mutex>
#include <string>
#include <vector>

namespace parity::ort {

// The C API of the process's ORT (ort_library.h), loaded on first use; every
// Ort:: call needs it first (the wrapper is built with ORT_API_MANUAL_INIT).
// Throws Ort::Exception (ORT_INVALID_ARGUMENT for a PARITY_ORT_LIBRARY that
// is no usable ORT, ORT_FAIL for a missing bundled one).
const OrtApi& OrtApiOrThrow();

// SessionOptions::AppendExecutionProvider_CPU without its link-time symbol:
// the loaded library's OrtSessionOptionsAppendExecutionProvider_CPU.
void AppendCpuProvider(Ort::SessionOptions& options, int use_arena);

// Loads the ORT first (OrtApiOrThrow), then created on first use (thread-safe) at WARNING severity with parity's logging
// callback; lives until the process exits. Never fails except by throwing
// Ort::Exception, which callers convert.
Ort::Env& GlobalEnv();

class LogCapture {
 public:
  // Registers a fresh log id "parity#<n>" (`prefix#<n>` when given).
  explicit LogCapture(const std::string& prefix = "parity");
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  const std::string& log_id() const { return log_id_; }
  // The messages captured so far, in arrival order; empties the capture.
  std::vector<std::string> TakeLines();

  // Called by the logging callback (any thread).
  void Append(const char* message);

 private:
  std::string log_id_;
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

}  // namespace parity::ort
