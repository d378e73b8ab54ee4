// SHA-256 digests of byte spans and files (for manifests and model hashes).
// Backed by OpenSSL's libcrypto. All functions are thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <future>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"

namespace parity {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::span<const std::byte> data);
// Lower-case hex, 64 characters.
std::string DigestToHex(const Sha256Digest& digest);
std::string Sha256Hex(std::span<const std::byte> data);
std::string Sha256Hex(std::string_view data);

// Hex digest of a file's contents, read in 1 MiB chunks. Errors (kNotFound,
// kInvalidArgument for read errors) name the file.
Result<std::string> Sha256FileHex(const std::filesystem::path& path);

// A file's Sha256FileHex computed on a thread of its own from construction,
// while the caller reads the file for something else (a model is hashed
// while it is parsed: check and baseline each hashed a 500 MB model before
// or after the parse, 0.5-1.2 s on this machine). Not copyable; get() from
// one thread.
class Sha256FileInBackground {
 public:
  explicit Sha256FileInBackground(std::filesystem::path path);
  // Waits for the digest; Sha256FileHex's error when the file could not be read.
  const Result<std::string>& get();

 private:
  std::future<Result<std::string>> future_;
  std::optional<Result<std::string>> value_;
};

// Incremental hashing: Update any number of times, then Finish once.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;

  void Update(std::span<const std::byte> data);
  Sha256Digest Finish();

 private:
  void* ctx_;  // EVP_MD_CTX*, kept opaque so that callers need no OpenSSL headers
};

}  // namespace parity
