// Process-wide facts about the loaded ONNX Runtime (ort_library.h), and how its log reaches
// the console. The ORT environment itself lives in ort_env.h (internal to
// src/ort/); nothing here exposes ORT types.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <string>
#include <vector>

namespace parity::ort {

// The process's ORT's version string, e.g. "1.29.0" (ort_library.h: loaded
// now if not yet); empty when no ORT could be loaded.
std::string OrtVersion();

// The libonnxruntime file the process runs (where OrtGetApiBase lives);
// empty when no ORT could be loaded.
std::string OrtLibraryPath();

// Execution providers compiled into the linked ORT, by ORT's names
// ("CPUExecutionProvider", "CUDAExecutionProvider", ...), in ORT's priority
// order. CPU is always present.
std::vector<std::string> AvailableProviders();

// When enabled (parity's --verbose), every line ORT logs is also printed to
// stderr, including the verbose session-creation lines of sessions that
// capture their optimizer log. Off by default: ORT's output is then dropped,
// because every error it reports also reaches parity as a Status.
void SetConsoleLogging(bool enabled);
bool ConsoleLoggingEnabled();

}  // namespace parity::ort
