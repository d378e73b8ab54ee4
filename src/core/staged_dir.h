// Folders written whole or not at all (docs/security.md, promise 2): a
// command that writes several files (a baseline) writes them into a staging
// folder beside the target, `.NAME.parity-staging.<pid>.<n>`, and Commit()
// puts the complete folder in place with one rename. An error, a refusal
// half-way or an interrupt leaves the target as it was: the destructor
// removes an uncommitted staging folder, and RemovePendingStagedDirs() does
// so from a SIGINT/SIGTERM handler.
//
// Thread-safety: distinct objects may be used from different threads.
#pragma once

#include <filesystem>

#include "core/status.h"

namespace parity {

class StagedDir {
 public:
  // Creates the staging folder beside `target` (creating target's parent
  // folders) and registers it for RemovePendingStagedDirs. Touches nothing
  // of `target`. kInvalidArgument naming the folder when it cannot be made.
  static Result<StagedDir> Create(const std::filesystem::path& target);

  StagedDir(StagedDir&& other) noexcept;
  StagedDir& operator=(StagedDir&& other) = delete;
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;
  // Removes the staging folder and everything in it unless committed.
  ~StagedDir();

  // Where the files go until Commit().
  const std::filesystem::path& path() const { return staging_; }
  const std::filesystem::path& target() const { return target_; }

  // Flushes the folder to disk (one syncfs: files written into it with
  // Sync::kByFolder have no fsync of their own), then puts the staging folder
  // in place of the target: a missing or empty
  // target is replaced by one rename; a non-empty one only with `replace`,
  // by an atomic exchange (renameat2 RENAME_EXCHANGE; where the file system
  // has none, two renames), after which the old folder is removed. On error
  // the target is as it was. Call at most once.
  Status Commit(bool replace);

 private:
  StagedDir(std::filesystem::path target, std::filesystem::path staging, int slot)
      : target_(std::move(target)), staging_(std::move(staging)), slot_(slot) {}
  std::filesystem::path target_;
  std::filesystem::path staging_;
  int slot_ = -1;
  bool done_ = false;
};

// Removes every live staging folder (and, during a Commit, the old folder
// being removed). Async-signal-safe: openat, getdents64, unlinkat only, on
// preallocated buffers; folders nested at most 8 deep.
void RemovePendingStagedDirs();

}  // namespace parity
