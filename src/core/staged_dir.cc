#include "core/staged_dir.h"

#include "core/signal_safe_paths.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace parity {
namespace {

namespace fs = std::filesystem;

// The staging folders a signal handler removes (signal_safe_paths.h).
core_internal::SignalSafePaths<16> g_staged;
std::atomic<unsigned> g_staged_counter{0};

int Register(const std::string& path) { return g_staged.Register(path); }
void Unregister(int slot) { g_staged.Unregister(slot); }

// The kernel's record of getdents64(2).
struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

}  // namespace

// Async-signal-safe: system calls on a buffer on the stack. A pass that
// removes entries starts the listing again (removal moves the offsets).
void core_internal::RemoveTreeAt(int parent_fd, const char* name, int depth) {
  if (::unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT) return;
  if (depth > 0) {
    const int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      alignas(8) char buf[2048];
      for (bool removed = true; removed;) {
        removed = false;
        ::lseek(fd, 0, SEEK_SET);
        for (;;) {
          const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
          if (n <= 0) break;
          for (long off = 0; off < n;) {
            const auto* d = reinterpret_cast<const LinuxDirent64*>(buf + off);
            off += d->d_reclen;
            if (std::strcmp(d->d_name, ".") == 0 || std::strcmp(d->d_name, "..") == 0) continue;
            RemoveTreeAt(fd, d->d_name, depth - 1);
            removed = true;
          }
        }
      }
      ::close(fd);
    }
  }
  ::unlinkat(parent_fd, name, AT_REMOVEDIR);
}

namespace {

// The target as an absolute path without a trailing separator.
fs::path NormalTarget(const fs::path& target) {
  std::error_code ec;
  fs::path t = fs::absolute(target, ec).lexically_normal();
  if (ec) t = target.lexically_normal();
  if (t.filename().empty()) t = t.parent_path();
  return t;
}

bool IsMissingOrEmptyDir(const fs::path& p) {
  std::error_code ec;
  const auto st = fs::symlink_status(p, ec);
  if (!fs::exists(st)) return true;
  return fs::is_directory(st) && fs::is_empty(p, ec) && !ec;
}

}  // namespace

void RemovePendingStagedDirs() {
  g_staged.ForEachLive([](const char* path) { core_internal::RemoveTreeAt(AT_FDCWD, path, 8); });
}

Result<StagedDir> StagedDir::Create(const fs::path& target) {
  const fs::path t = NormalTarget(target);
  std::error_code ec;
  fs::create_directories(t.parent_path(), ec);
  if (ec) return InvalidArgument(fmt::format("{}: cannot create the directory: {}", t.parent_path().string(), ec.message()));
  const fs::path staging = t.parent_path() / fmt::format(".{}.parity-staging.{}.{}", t.filename().string(), ::getpid(),
                                                          g_staged_counter.fetch_add(1));
  // Registered before it exists, so that no signal can leave it unregistered.
  const int slot = Register(staging.string());
  if (::mkdir(staging.c_str(), 0777) != 0) {
    const int err = errno;
    Unregister(slot);
    return InvalidArgument(
        fmt::format("{}: cannot create the staging folder {}: {}", t.string(), staging.string(), std::strerror(err)));
  }
  return StagedDir(t, staging, slot);
}

StagedDir::StagedDir(StagedDir&& other) noexcept
    : target_(std::move(other.target_)),
      staging_(std::move(other.staging_)),
      slot_(std::exchange(other.slot_, -1)),
      done_(std::exchange(other.done_, true)) {}

StagedDir::~StagedDir() {
  if (!done_) core_internal::RemoveTreeAt(AT_FDCWD, staging_.c_str(), 8);
  Unregister(slot_);
}

namespace {

// Flushes the staging folder's files (written with Sync::kByFolder: no fsync
// of their own) and entries to disk before the folder is put in place: one
// syncfs(2) for the file system the folder is on, instead of an fsync per
// file and per rename.
Status SyncFolder(const fs::path& dir, const fs::path& target) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::syncfs(fd) != 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return InvalidArgument(fmt::format("{}: cannot flush the staging folder {} to disk: {}", target.string(),
                                       dir.string(), std::strerror(err)));
  }
  ::close(fd);
  return {};
}

// Persists the rename that put the folder in place; failing here loses
// durability, not atomicity.
void SyncParent(const fs::path& target) {
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Status StagedDir::Commit(bool replace) {
  if (done_) return InternalError(fmt::format("{}: Commit called twice", target_.string()));
  const auto fail = [&](const std::string& what) {
    return InvalidArgument(fmt::format("{}: {}: {}", target_.string(), what, std::strerror(errno)));
  };
  PARITY_RETURN_IF_ERROR(SyncFolder(staging_, target_));
  if (IsMissingOrEmptyDir(target_)) {
    // rename(2) replaces an empty folder; a missing one is simply created.
    if (::rename(staging_.c_str(), target_.c_str()) != 0) return fail("cannot rename the staging folder into place");
    done_ = true;
    Unregister(std::exchange(slot_, -1));
    SyncParent(target_);
    return {};
  }
  std::error_code ec;
  if (!replace || !fs::is_directory(fs::symlink_status(target_, ec)))
    return InvalidArgument(fmt::format("{}: exists and is not an empty folder; nothing was written", target_.string()));
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) {
    if (errno != EINVAL && errno != ENOSYS) return fail("cannot exchange the staging folder with the old one");
    // No atomic exchange here: the old folder steps aside first.
    const fs::path old = staging_.string() + ".old";
    if (::rename(target_.c_str(), old.c_str()) != 0) return fail("cannot move the old folder aside");
    if (::rename(staging_.c_str(), target_.c_str()) != 0) {
      const Status s = fail("cannot rename the staging folder into place");
      ::rename(old.c_str(), target_.c_str());
      return s;
    }
    ::rename(old.c_str(), staging_.c_str());
  }
  SyncParent(target_);
  // The staging path now holds the old folder; it stays registered while it
  // is removed, so an interrupt now removes the rest of it.
  done_ = true;
  core_internal::RemoveTreeAt(AT_FDCWD, staging_.c_str(), 8);
  Unregister(std::exchange(slot_, -1));
  return {};
}

}  // namespace parity
