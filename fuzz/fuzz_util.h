// Shared helpers for the libFuzzer targets (see fuzz/README.md).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace parity::fuzz {

// A per-process scratch file for readers that only take a path (libzip opens
// archives by name). Written whole for each input; removed at exit.
class ScratchFile {
 public:
  explicit ScratchFile(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::filesystem::path(dir && *dir ? dir : "/tmp") /
            ("parity_fuzz_" + std::to_string(::getpid()) + suffix);
  }
  // A file at a given path (inside a scratch directory).
  explicit ScratchFile(std::filesystem::path path) : path_(std::move(path)) {}
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the file's contents with `data`; aborts when the disk refuses,
  // which is the harness failing, not the target.
  const std::filesystem::path& path() const { return path_; }

  const std::filesystem::path& Write(const uint8_t* data, size_t size) {
    FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
      std::perror("parity fuzz: cannot write the scratch file");
      std::abort();
    }
    return path_;
  }

 private:
  std::filesystem::path path_;
};

// Aborts with `what` so libFuzzer records the input as a finding.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "parity fuzz: invariant broken: %s\n", what.c_str());
  std::abort();
}

// Every error must say something. (Messages may quote names taken from the
// file, newlines included; the command line folds them onto one line.)
template <typename R>
void CheckError(const R& r) {
  if (r) return;
  if (r.error().message().empty()) Fail("empty error message");
}

}  // namespace parity::fuzz
