// Opening files whose bytes parity does not trust (docs/security.md): only
// regular files are read, without ever blocking on a FIFO or reading a device
// such as /dev/zero, and a file's size is checked against a limit before
// anything is allocated for it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/status.h"

namespace parity {

// Limits on the small text files parity reads whole (docs/security.md
// "Limits"): run configs, tolerance policies, manifests.
inline constexpr int64_t kMaxConfigBytes = int64_t{16} << 20;    // --config, --tolerance, target.json
inline constexpr int64_t kMaxManifestBytes = int64_t{256} << 20;  // baseline and dump manifests

// An open, read-only file descriptor of a regular file, closed on destruction.
class RegularFile {
 public:
  // Opens `path` with O_NONBLOCK (a FIFO never blocks the open) and checks
  // with fstat on the open descriptor (no race with a swapped path) that it is
  // a regular file. Symlinks are followed. Errors, naming the path:
  // kNotFound when it does not exist; kInvalidArgument when it is a FIFO, a
  // device, a directory or a socket, or cannot be opened.
  static Result<RegularFile> Open(const std::filesystem::path& path);

  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  int64_t size() const { return size_; }
  // Gives up ownership of the descriptor (the caller closes it).
  int Release();

 private:
  RegularFile(int fd, int64_t size) : fd_(fd), size_(size) {}
  int fd_ = -1;
  int64_t size_ = 0;
};

// Reads a regular file whole. Errors as Open, and kInvalidArgument when the
// file is larger than `max_bytes` (checked before reading) or a read fails.
Result<std::string> ReadRegularFile(const std::filesystem::path& path, int64_t max_bytes);

// Reads `length` bytes at `offset`; kCorrupt when the range lies outside the file.
Result<std::string> ReadRegularFileRange(const std::filesystem::path& path, int64_t offset, int64_t length);

}  // namespace parity
