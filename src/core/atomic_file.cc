#include "core/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "core/input_files.h"
#include "core/signal_safe_paths.h"

namespace parity {
namespace {

// The temporary files a signal handler unlinks (signal_safe_paths.h).
core_internal::SignalSafePaths<64> g_pending;
std::atomic<unsigned> g_temp_counter{0};

int Register(const std::string& path) { return g_pending.Register(path); }
void Unregister(int slot) { g_pending.Unregister(slot); }

std::string ErrnoText(int err) { return std::strerror(err); }

}  // namespace

void RemovePendingTempFiles() {
  g_pending.ForEachLive([](const char* path) { ::unlink(path); });
}

Result<AtomicFile> AtomicFile::Create(const std::filesystem::path& path, Sync sync) {
  PARITY_RETURN_IF_ERROR(CheckNotAnInput(path));
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  if (ec) abs = path;
  std::filesystem::path temp =
      fmt::format("{}.tmp.{}.{}", abs.string(), ::getpid(), g_temp_counter.fetch_add(1));
  // Register before creating so that there is no window in which a signal
  // leaves an unregistered file behind (unlinking a missing file is harmless).
  const int slot = Register(temp.string());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    Unregister(slot);
    std::string msg =
        fmt::format("{}: cannot create temp file {}: {}", path.string(), temp.string(), ErrnoText(err));
    if (err == ENOENT) return NotFound(std::move(msg));
    return InvalidArgument(std::move(msg));
  }
  return AtomicFile(path, std::move(temp), fd, slot, sync);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(std::exchange(other.fd_, -1)),
      slot_(std::exchange(other.slot_, -1)),
      sync_(other.sync_),
      failed_(other.failed_),
      done_(std::exchange(other.done_, true)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    Discard();
    path_ = std::move(other.path_);
    temp_path_ = std::move(other.temp_path_);
    fd_ = std::exchange(other.fd_, -1);
    slot_ = std::exchange(other.slot_, -1);
    sync_ = other.sync_;
    failed_ = other.failed_;
    done_ = std::exchange(other.done_, true);
  }
  return *this;
}

AtomicFile::~AtomicFile() { Discard(); }

void AtomicFile::Discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!done_) ::unlink(temp_path_.c_str());
  Unregister(slot_);
  slot_ = -1;
  done_ = true;
}

Status AtomicFile::Write(std::span<const std::byte> data) {
  if (done_ || fd_ < 0) return InternalError(fmt::format("{}: write after commit", path_.string()));
  const std::byte* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    // Linux writes at most ~2 GiB per call; loop over partial writes.
    const ssize_t n = ::write(fd_, p, std::min<size_t>(left, size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      failed_ = true;
      return InvalidArgument(fmt::format("{}: write failed: {}", path_.string(), ErrnoText(errno)));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return {};
}

Status AtomicFile::Write(std::string_view data) {
  return Write(std::as_bytes(std::span<const char>(data.data(), data.size())));
}

Status AtomicFile::Commit() {
  if (done_) return InternalError(fmt::format("{}: Commit called twice", path_.string()));
  auto fail = [this](std::string what) {
    const int err = errno;
    Discard();
    return InvalidArgument(fmt::format("{}: {}: {}", path_.string(), what, ErrnoText(err)));
  };
  if (failed_) {
    Discard();
    return InvalidArgument(fmt::format("{}: not written: an earlier write failed", path_.string()));
  }
  if (sync_ == Sync::kEach && ::fsync(fd_) != 0) return fail("fsync failed");
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return fail("close failed");
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) return fail("rename of the temp file failed");
  done_ = true;
  Unregister(std::exchange(slot_, -1));
  NoteOutputFile(path_);  // read back later, it is this command's own file, not an input
  if (sync_ == Sync::kByFolder) return {};  // StagedDir::Commit syncs the folder
  // Persist the rename itself; failing here loses durability, not atomicity.
  std::filesystem::path dir = path_.parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

Status WriteFileAtomic(const std::filesystem::path& path, std::span<const std::byte> data, Sync sync) {
  PARITY_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path, sync));
  PARITY_RETURN_IF_ERROR(file.Write(data));
  return file.Commit();
}

Status WriteFileAtomic(const std::filesystem::path& path, std::string_view data, Sync sync) {
  return WriteFileAtomic(path, std::as_bytes(std::span<const char>(data.data(), data.size())), sync);
}

}  // namespace parity
