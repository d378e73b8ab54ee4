#include "core/own_tree.h"

#include <fmt/format.h>

#include <system_error>

namespace parity {
namespace fs = std::filesystem;

namespace {

std::string_view KindName(fs::file_type t) {
  switch (t) {
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::block:
    case fs::file_type::character:
      return "a device";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::not_found:
      return "a dangling symlink";
    default:
      return "not a regular file";
  }
}

// One entry: "" when it passes.
Status CheckEntry(const fs::path& path, const fs::file_status& own, bool allow_symlinks, std::string_view hint) {
  fs::file_status st = own;
  if (fs::is_symlink(own)) {
    if (!allow_symlinks)
      return InvalidArgument(fmt::format("{}: a symlink; the files of a folder of tensors must be its own{}",
                                         path.string(), hint));
    std::error_code ec;
    st = fs::status(path, ec);
  }
  if (fs::is_regular_file(st) || fs::is_directory(st)) return {};
  return InvalidArgument(fmt::format("{}: {}, not a tensor file", path.string(), KindName(st.type())));
}

}  // namespace

Status CheckOwnTree(const fs::path& root, bool allow_symlinks, std::string_view flag_hint) {
  std::error_code ec;
  const auto options = allow_symlinks ? fs::directory_options::follow_directory_symlink : fs::directory_options::none;
  size_t walked = 0;
  for (fs::recursive_directory_iterator it(root, options, ec), end; !ec && it != end; it.increment(ec)) {
    if (++walked > kMaxOwnTreeEntries)
      return InvalidArgument(fmt::format("{}: more than {} entries below it", root.string(), kMaxOwnTreeEntries));
    // Symlinked folders are followed only when allowed; a cycle then ends at the depth limit.
    if (it.depth() > 32) return InvalidArgument(fmt::format("{}: folders nested more than 32 deep", root.string()));
    std::error_code st_ec;
    const fs::file_status own = it->symlink_status(st_ec);
    if (st_ec) return InvalidArgument(fmt::format("{}: cannot be read: {}", it->path().string(), st_ec.message()));
    PARITY_RETURN_IF_ERROR(CheckEntry(it->path(), own, allow_symlinks, flag_hint));
  }
  if (ec) return InvalidArgument(fmt::format("{}: cannot list the folder: {}", root.string(), ec.message()));
  return {};
}

Status CheckOwnFile(const fs::path& path, bool allow_symlinks, std::string_view flag_hint) {
  std::error_code ec;
  const fs::file_status own = fs::symlink_status(path, ec);
  if (ec || !fs::exists(own)) return NotFound(fmt::format("{}: no such file", path.string()));
  PARITY_RETURN_IF_ERROR(CheckEntry(path, own, allow_symlinks, flag_hint));
  if (fs::is_directory(fs::status(path, ec)))
    return InvalidArgument(fmt::format("{}: a directory, not a tensor file", path.string()));
  return {};
}

}  // namespace parity
