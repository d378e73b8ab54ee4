// A progress bar on stderr for the engine's long work (core/progress.h), for
// the life of a command: drawn in place only when stderr is a terminal
// (report/console/check_console.h ProgressBar), so logs and CI stay quiet. Issue 54:
// a big model's baseline and a drill-down ran for minutes without a sign.
// A bar of our own rather than a library: it is one line redrawn with \r,
// and the project's C++ side has no dependency that draws one.
#pragma once

#include <memory>
#include <string>

#include "core/progress.h"
#include "report/console/check_console.h"

namespace parity::cli {

class TerminalProgress {
 public:
  TerminalProgress() {
    previous_ = SetProgressSink([this](std::string_view what, size_t done, size_t total) {
      if (!bar_ || total != total_) {  // a new piece of work: a bar of its own size
        if (bar_) bar_->Finish();
        bar_ = std::make_unique<ProgressBar>(total);
        total_ = total;
      }
      bar_->Update(done, what);
    });
  }
  ~TerminalProgress() {
    if (bar_) bar_->Finish();
    SetProgressSink(std::move(previous_));
  }
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

 private:
  std::unique_ptr<ProgressBar> bar_;
  size_t total_ = 0;
  ProgressSink previous_;
};

}  // namespace parity::cli
