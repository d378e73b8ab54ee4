#include "cli/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <system_error>

#include <fmt/format.h>


namespace parity::cli {

Status CheckOutputPath(const std::string& path, std::string_view option, bool directory) {
  namespace fs = std::filesystem;
  if (path.empty()) return {};
  std::error_code ec;
  const fs::path p(path);
  const auto status = fs::status(p, ec);
  if (fs::exists(status)) {
    if (directory && !fs::is_directory(status))
      return InvalidArgument(fmt::format("{} {}: exists and is not a directory", option, path));
    if (!directory && fs::is_directory(status))
      return InvalidArgument(fmt::format("{} {}: is a directory; give a file name", option, path));
  }
  // The nearest existing ancestor (the directory itself when it exists).
  fs::path dir = directory && fs::is_directory(status) ? p : p.parent_path();
  if (dir.empty()) dir = ".";
  while (!fs::exists(dir, ec)) {
    fs::path parent = dir.parent_path();
    if (parent.empty()) parent = ".";
    if (parent == dir) break;
    dir = std::move(parent);
  }
  if (!fs::is_directory(dir, ec))
    return InvalidArgument(fmt::format("{} {}: '{}' is not a directory", option, path, dir.string()));
  // access(W_OK) says yes for root and for pseudo file systems (/proc): a
  // file actually created (and removed at once) is the real test.
  const fs::path probe = dir / fmt::format(".parity-probe-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    return InvalidArgument(fmt::format("{} {}: cannot write into '{}': {}", option, path, dir.string(),
                                       std::generic_category().message(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
  return {};
}

}  // namespace parity::cli
