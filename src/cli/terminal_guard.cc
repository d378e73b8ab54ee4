#include "cli/terminal_guard.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "report/text_escape.h"

namespace parity::cli {
namespace {

// Never destroyed: exit() runs FlushHeldAtExit after the destructors of
// statics made later than its registration (a static filter was freed
// before it flushed: ASan, heap-use-after-free).
TerminalFilter& StdoutFilter() {
  static TerminalFilter* filter = new TerminalFilter;
  return *filter;
}

bool WriteAll(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

ssize_t CookieWrite(void*, const char* data, size_t size) {
  if (!WriteAll(StdoutFilter().Feed({data, size}))) return -1;
  return static_cast<ssize_t>(size);
}

int CookieClose(void*) { return WriteAll(StdoutFilter().Flush()) ? 0 : EOF; }

// exit() flushes stdout through CookieWrite but never closes it: what the
// filter still holds (the tail that a long name may start in) is written here.
void FlushHeldAtExit() {
  std::fflush(stdout);
  WriteAll(StdoutFilter().Flush());
}

}  // namespace

void FilterStdout() {
  static bool done = false;
  if (done) return;
  done = true;
  cookie_io_functions_t io{};
  io.write = &CookieWrite;
  io.close = &CookieClose;
  std::FILE* filtered = fopencookie(nullptr, "w", io);
  if (filtered == nullptr) return;  // unfiltered is still correct output
  std::fflush(stdout);
  // Line-buffered on a terminal as stdio does, fully buffered otherwise.
  std::setvbuf(filtered, nullptr, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
  stdout = filtered;
  std::atexit(&FlushHeldAtExit);
}

int ReportInternalError(const std::exception* e) {
  std::string what = "an unknown exception";
  if (dynamic_cast<const std::bad_alloc*>(e) != nullptr)
    what = "out of memory (std::bad_alloc)";
  else if (e != nullptr)
    what = e->what();
  for (char& c : what)
    if (c == '\n' || c == '\r') c = ' ';
  std::fflush(stdout);
  std::fprintf(stderr, "parity: internal error (this is a bug in parity): %s\n", TerminalSafe(what).c_str());
  return 3;
}

void InstallTerminateHandler() {
  std::set_terminate([] {
    int code = 3;
    try {
      if (auto p = std::current_exception()) std::rethrow_exception(p);
      std::fprintf(stderr, "parity: internal error (this is a bug in parity): terminate called\n");
    } catch (const std::exception& e) {
      code = ReportInternalError(&e);
    } catch (...) {
      code = ReportInternalError(nullptr);
    }
    std::fflush(stdout);
    std::_Exit(code);
  });
}

}  // namespace parity::cli
