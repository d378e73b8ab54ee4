// The process-wide guards of `main` (docs/security.md): nothing a model or a
// file holds reaches the terminal as an escape sequence, and no exception
// ends the process with a signal.
#pragma once

#include <exception>

namespace parity::cli {

// Replaces `stdout` with a stream that passes everything through
// TerminalFilter (report/text_escape.h) to descriptor 1. Call once, first.
void FilterStdout();

// Prints "parity: internal error (this is a bug in parity): <what>" (or
// "out of memory" for std::bad_alloc) and returns exit code 3.
int ReportInternalError(const std::exception* e);

// std::set_terminate: an exception that escapes a thread, or a noexcept
// function, exits 3 with the same line instead of raising SIGABRT.
void InstallTerminateHandler();

}  // namespace parity::cli
