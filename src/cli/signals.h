// SIGINT and SIGTERM: an interrupted parity leaves no partial file behind.
//
// The handler kills and reaps every child process parity started
// (core/child_process.h: a child runner), unlinks the temp files of every
// uncommitted AtomicFile (core/atomic_file.h: every report and output file is
// written to a temp name and renamed), removes every staging folder
// (core/staged_dir.h) and scratch folder (core/scratch_dir.h), writes one line
//   parity: interrupted (SIGINT); no partial files left
// to stderr and exits with 128 + the signal number (130 for SIGINT, 143 for
// SIGTERM), as a shell reports a process killed by that signal. A file that
// was already renamed into place is complete; one that was not is gone.
#pragma once

namespace parity::cli {

// Installs the handler for SIGINT and SIGTERM. Call once, early in main().
void InstallSignalHandlers();

}  // namespace parity::cli
