// A regular file's bytes mapped read-only instead of copied (issue 26): the
// walk of a 500 MB model (onnx/weights_in_file.h) reads the graph's fields
// and steps over the weights, whose pages are then never read at all (the
// copy cost 0.3-0.5 s and ~450 MiB for a moment on gpt2_small here).
//
// A mapped file that another process truncates raises SIGBUS when a page past
// its new end is read. MappedFileAt lets a SIGBUS handler (cli/signals.cc)
// tell that case (the file changed while parity read it: one line, exit 2)
// from a bug.
//
// Thread-safety: distinct objects may be used from different threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/status.h"

namespace parity {

class MappedFile {
 public:
  // The bytes of `path`, mapped; read into memory instead when the file is
  // under 1 MiB or cannot be mapped. Errors as RegularFile::Open, and
  // kInvalidArgument naming the file when it is larger than `max_bytes`
  // (checked before anything is mapped or read).
  static Result<MappedFile> Open(const std::filesystem::path& path, int64_t max_bytes);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view bytes() const;
  bool mapped() const { return map_ != nullptr; }

 private:
  MappedFile() = default;
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string owned_;  // the bytes read, when not mapped
  int slot_ = -1;      // in the registry MappedFileAt reads
};

// The path of the live MappedFile whose mapping holds `address`, or null.
// Async-signal-safe (atomic loads only).
const char* MappedFileAt(const void* address);

}  // namespace parity
