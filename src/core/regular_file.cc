#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/input_files.h"

namespace parity {

Result<RegularFile> RegularFile::Open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound(fmt::format("{}: no such file", path.string()));
    return InvalidArgument(fmt::format("{}: cannot open: {}", path.string(), std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* what = S_ISFIFO(st.st_mode)  ? "a FIFO"
                       : S_ISDIR(st.st_mode) ? "a directory"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                       : S_ISSOCK(st.st_mode)                      ? "a socket"
                                                                   : "not readable";
    return InvalidArgument(fmt::format("{}: not a regular file ({})", path.string(), what));
  }
  NoteInputFile(st, path);
  // Back to blocking reads: O_NONBLOCK was only for the open itself.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return RegularFile(fd, static_cast<int64_t>(st.st_size));
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

int RegularFile::Release() { return std::exchange(fd_, -1); }

namespace {

Status ReadAt(const RegularFile& file, const std::filesystem::path& path, int64_t offset, std::string& out) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(file.fd(), out.data() + done, out.size() - done, offset + static_cast<int64_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InvalidArgument(fmt::format("{}: read error: {}", path.string(), std::strerror(errno)));
    if (n == 0)
      return Corrupt(fmt::format("{}: file ended after {} of {} bytes (changed while read?)", path.string(),
                                 done, out.size()));
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

Result<std::string> ReadRegularFile(const std::filesystem::path& path, int64_t max_bytes) {
  PARITY_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path));
  if (file.size() > max_bytes)
    return InvalidArgument(fmt::format("{}: file is {} bytes, more than the limit of {} bytes", path.string(),
                                       file.size(), max_bytes));
  std::string bytes(static_cast<size_t>(file.size()), '\0');
  PARITY_RETURN_IF_ERROR(ReadAt(file, path, 0, bytes));
  return bytes;
}

Result<std::string> ReadRegularFileRange(const std::filesystem::path& path, int64_t offset, int64_t length) {
  PARITY_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path));
  const int64_t size = file.size();
  if (offset < 0 || length < 0 || offset > size || length > size - offset)
    return Corrupt(fmt::format("{}: range [{}, {}) lies outside the file of {} bytes", path.string(), offset,
                               offset + length, size));
  std::string bytes(static_cast<size_t>(length), '\0');
  PARITY_RETURN_IF_ERROR(ReadAt(file, path, offset, bytes));
  return bytes;
}

}  // namespace parity
