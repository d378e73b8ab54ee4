// A scratch folder: parity's own working files (a child runner's jobs, the
// optimized models ORT saves for locate, the Ray engine's entry list) in a
// fresh folder under the system temp dir, `parity_<tag>.XXXXXX` (mkdtemp),
// removed with its contents on destruction, and by RemovePendingScratchDirs()
// from a SIGINT/SIGTERM handler (cli/signals.h), so that an interrupted
// parity leaves nothing in TMPDIR (docs/errors.md "Interruption").
//
// Thread-safety: distinct objects may be used from different threads.
#pragma once

#include <filesystem>
#include <string>

#include "core/status.h"

namespace parity {

class ScratchDir {
 public:
  // kRuntime naming the template when the folder cannot be made.
  static Result<ScratchDir> Create(const std::string& tag);
  ScratchDir(ScratchDir&& o) noexcept;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  ScratchDir(std::filesystem::path p, int slot) : path_(std::move(p)), slot_(slot) {}
  std::filesystem::path path_;
  int slot_ = -1;
};

// Removes every live scratch folder with what it holds. Async-signal-safe
// (openat, getdents64, unlinkat on buffers on the stack); 32 folders
// registered at once, each removed 8 levels deep.
void RemovePendingScratchDirs();

}  // namespace parity
