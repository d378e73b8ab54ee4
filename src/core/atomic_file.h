// Files written whole or not at all.
//
// AtomicFile writes to a temporary file `PATH.tmp.<pid>.<n>` in the directory
// of PATH, and Commit() fsyncs it and renames it over PATH, so a reader sees
// either the old file or the complete new one, never a prefix. A temp file
// that is not committed is removed by the destructor, and, if the process is
// interrupted, by RemovePendingTempFiles() called from a signal handler.
//
// A file inside a StagedDir's folder needs no fsync of its own: the folder
// is invisible until StagedDir::Commit, which flushes it whole with one
// syncfs before putting it in place (Sync::kByFolder; a baseline of 555
// tensors made 1117 fsync calls before).
//
// Thread-safety: distinct AtomicFile objects may be used from different
// threads; one object is not safe for concurrent use.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string_view>

#include "core/status.h"

namespace parity {

// Who makes a committed file durable: Commit itself (fsync of the file and
// of its directory), or the StagedDir the file lies in (its Commit syncs the
// whole folder once).
enum class Sync { kEach, kByFolder };

class AtomicFile {
 public:
  // Creates the temp file next to `path` (the directory must exist) and
  // registers it for RemovePendingTempFiles. Errors: kInvalidArgument when
  // `path` is one of the command's inputs (core/input_files.h: a file is
  // never replaced by an output of the command that read it); kNotFound when the
  // directory does not exist, kInvalidArgument for other OS errors; messages
  // name `path`.
  static Result<AtomicFile> Create(const std::filesystem::path& path, Sync sync = Sync::kEach);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Closes and removes the temp file unless Commit() succeeded.
  ~AtomicFile();

  // Appends bytes. After a failed Write, Commit() fails too.
  Status Write(std::span<const std::byte> data);
  Status Write(std::string_view data);

  // fsyncs (Sync::kEach), closes and renames the temp file over the target.
  // On failure the temp file is removed and the target is untouched. Call at
  // most once.
  Status Commit();

  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& temp_path() const { return temp_path_; }

 private:
  AtomicFile(std::filesystem::path path, std::filesystem::path temp_path, int fd, int slot, Sync sync)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd), slot_(slot), sync_(sync) {}
  void Discard();

  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  int fd_ = -1;
  int slot_ = -1;  // index in the pending temp file registry, -1 if none
  Sync sync_ = Sync::kEach;
  bool failed_ = false;
  bool done_ = false;  // committed or discarded
};

// Writes `data` to `path` through an AtomicFile.
Status WriteFileAtomic(const std::filesystem::path& path, std::span<const std::byte> data,
                       Sync sync = Sync::kEach);
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view data, Sync sync = Sync::kEach);

// Unlinks every temp file of a live, uncommitted AtomicFile. Async-signal-safe
// (only atomic loads and unlink(2)): meant for SIGINT/SIGTERM handlers, which
// then re-raise or _exit. The registry holds 64 files with absolute paths of
// up to 4095 bytes; files beyond that still work but are not registered.
void RemovePendingTempFiles();

}  // namespace parity
