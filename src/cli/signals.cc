#include "cli/signals.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "core/atomic_file.h"
#include "core/child_process.h"
#include "core/mapped_file.h"
#include "core/scratch_dir.h"
#include "core/staged_dir.h"

namespace parity::cli {
namespace {

void WriteAll(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;  // nothing better to do in a handler
    text += n;
    left -= static_cast<size_t>(n);
  }
}

// Everything an interrupted parity leaves: its children first (a child
// runner writes into a scratch folder), then its temp files, staging and
// scratch folders. Async-signal-safe: kill(2) and waitpid(2)
// (core/child_process.h), unlink(2) (core/atomic_file.h), the folders'
// removal (core/staged_dir.h, core/scratch_dir.h).
void CleanUp() {
  KillPendingChildren();
  RemovePendingTempFiles();
  RemovePendingStagedDirs();
  RemovePendingScratchDirs();
}

// Async-signal-safe only: CleanUp, write(2), _exit(2).
extern "C" void OnTerminatingSignal(int sig) {
  CleanUp();
  WriteAll(sig == SIGINT    ? "parity: interrupted (SIGINT); no partial files left\n"
           : sig == SIGTERM ? "parity: interrupted (SIGTERM); no partial files left\n"
                            : "parity: interrupted; no partial files left\n");
  ::_exit(128 + sig);
}

// A file parity maps (core/mapped_file.h) that another process truncates
// faults on its next page: that is bad input (the file changed while it was
// read), one line and exit 2. Any other SIGBUS is a bug: the default action
// is restored and the faulting access raises it again.
extern "C" void OnBusError(int sig, siginfo_t* info, void*) {
  const char* path = info != nullptr ? MappedFileAt(info->si_addr) : nullptr;
  if (path == nullptr) {
    ::signal(sig, SIG_DFL);
    return;
  }
  CleanUp();
  WriteAll("parity: ");
  WriteAll(path);
  WriteAll(": the file changed (was truncated) while parity read it\n");
  ::_exit(2);
}

}  // namespace

void InstallSignalHandlers() {
  struct sigaction bus {};
  bus.sa_sigaction = &OnBusError;
  bus.sa_flags = SA_SIGINFO;
  sigemptyset(&bus.sa_mask);
  ::sigaction(SIGBUS, &bus, nullptr);
  struct sigaction action {};
  action.sa_handler = &OnTerminatingSignal;
  sigemptyset(&action.sa_mask);
  // Block the other one while handling, so two signals do not interleave.
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    // A signal ignored by the parent (nohup, `cmd &` in a non-interactive
    // shell) stays ignored, as POSIX shells expect.
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &action, nullptr);
  }
}

}  // namespace parity::cli
