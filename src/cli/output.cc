#include "cli/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

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

namespace {

// `p` absolute and normal, its longest existing prefix with symlinks resolved.
std::filesystem::path Resolved(const std::string& p) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
  if (ec) abs = std::filesystem::absolute(p, ec).lexically_normal();
  // "R/" and "R" are one folder.
  if (!abs.has_filename() && abs.has_parent_path() && abs != abs.root_path()) abs = abs.parent_path();
  return abs;
}

// Whether `inner` is `outer` or lies below it, component by component.
bool Within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

}  // namespace

Status CheckOutputsApart(std::initializer_list<NamedOutput> outputs) {
  std::vector<std::pair<const NamedOutput*, std::filesystem::path>> given;
  for (const NamedOutput& o : outputs)
    if (!o.path.empty()) given.emplace_back(&o, Resolved(o.path));
  for (size_t a = 0; a < given.size(); ++a)
    for (size_t b = a + 1; b < given.size(); ++b) {
      const auto& [x, px] = given[a];
      const auto& [y, py] = given[b];
      if (px == py)
        return InvalidArgument(fmt::format("{} {} and {} {} are one path; give each output its own", x->option,
                                           x->path, y->option, y->path));
      if (Within(px, py) || Within(py, px)) {
        const auto& [in, out] = Within(px, py) ? std::pair(x, y) : std::pair(y, x);
        return InvalidArgument(fmt::format("{} {} lies inside {} {}, which parity writes whole; give outputs that do "
                                           "not nest",
                                           in->option, in->path, out->option, out->path));
      }
    }
  return {};
}

void PrintNote(std::string_view line) {
  std::fprintf(stderr, "parity: %.*s\n", static_cast<int>(line.size()), line.data());
}

}  // namespace parity::cli
