#include "core/sha256.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/regular_file.h"

namespace parity {

Sha256Hasher::Sha256Hasher() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}

Sha256Hasher::~Sha256Hasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256Hasher::Update(std::span<const std::byte> data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}

Sha256Digest Sha256Hasher::Finish() {
  Sha256Digest out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &len);
  return out;
}

Sha256Digest Sha256(std::span<const std::byte> data) {
  Sha256Hasher h;
  h.Update(data);
  return h.Finish();
}

std::string DigestToHex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(64, '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    s[2 * i] = kHex[digest[i] >> 4];
    s[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return s;
}

std::string Sha256Hex(std::span<const std::byte> data) { return DigestToHex(Sha256(data)); }

std::string Sha256Hex(std::string_view data) {
  return Sha256Hex(std::as_bytes(std::span<const char>(data.data(), data.size())));
}

Result<std::string> Sha256FileHex(const std::filesystem::path& path) {
  // A FIFO or a device (/dev/zero) is refused rather than hashed forever.
  PARITY_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path));
  Sha256Hasher h;
  std::vector<std::byte> buf(size_t{1} << 20);
  while (true) {
    const ssize_t n = ::read(file.fd(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InvalidArgument(fmt::format("{}: read error: {}", path.string(), std::strerror(errno)));
    if (n == 0) break;
    h.Update({buf.data(), static_cast<size_t>(n)});
  }
  return DigestToHex(h.Finish());
}

Sha256FileInBackground::Sha256FileInBackground(std::filesystem::path path)
    : future_(std::async(std::launch::async, [path = std::move(path)] { return Sha256FileHex(path); })) {}

const Result<std::string>& Sha256FileInBackground::get() {
  if (!value_) value_.emplace(future_.get());
  return *value_;
}

}  // namespace parity
