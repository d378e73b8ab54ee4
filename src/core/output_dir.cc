#include "core/output_dir.h"

#include <fmt/format.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "core/atomic_file.h"
#include "core/input_files.h"
#include "core/regular_file.h"

namespace parity {

namespace fs = std::filesystem;

Status CheckOutputDir(const fs::path& dir, std::string_view kind) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dir, ec);
  if (ec || !fs::exists(st)) return {};
  if (!fs::is_directory(fs::status(dir, ec)))
    return InvalidArgument(fmt::format("{}: exists and is not a directory", dir.string()));
  if (fs::is_empty(dir, ec) && !ec) return {};
  auto marker = ReadRegularFile(dir / kOutputMarker, 4096);
  if (!marker)
    return InvalidArgument(fmt::format(
        "{}: the folder holds files parity did not write (no {} marker); give an empty or new folder",
        dir.string(), kOutputMarker));
  std::string text = *marker;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text != kind)
    return InvalidArgument(fmt::format("{}: the folder holds another parity output ({}), not {}", dir.string(),
                                       text.substr(0, 64), kind));
  return {};
}

Status ClaimOutputDir(const fs::path& dir, std::string_view kind) {
  PARITY_RETURN_IF_ERROR(CheckOutputDir(dir, kind));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return InvalidArgument(fmt::format("{}: cannot create the directory: {}", dir.string(), ec.message()));
  // A marker already there is of this kind (checked above) and was read as
  // an input: it is left as it is.
  if (fs::exists(dir / kOutputMarker, ec)) return {};
  return WriteFileAtomic(dir / kOutputMarker, std::string(kind) + "\n");
}

Status CheckReplaceableOutputDir(const fs::path& dir, std::string_view kind, std::span<const std::string_view> files) {
  PARITY_RETURN_IF_ERROR(CheckOutputDir(dir, kind));
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(dir, ec)))
    return InvalidArgument(fmt::format(
        "{}: is a symbolic link; parity puts the folder in place whole, so give the folder itself", dir.string()));
  if (!fs::exists(dir, ec) || fs::is_empty(dir, ec)) return {};
  std::vector<std::string_view> listed(files.begin(), files.end());
  listed.push_back(kOutputMarker);
  // The marker was read by CheckOutputDir itself; any other listed file that
  // is an input of this command is never deleted.
  PARITY_ASSIGN_OR_RETURN(auto unlisted, FirstUnlistedEntry(dir, listed, [](const fs::path& path, const std::string& rel) {
                            return rel == kOutputMarker ? Status{} : CheckNotAnInput(path);
                          }));
  if (unlisted)
    return InvalidArgument(fmt::format(
        "{}: '{}' is not a file parity writes there, and the folder is replaced whole; move it away or give "
        "another folder",
        dir.string(), *unlisted));
  return {};
}

Result<std::optional<std::string>> FirstUnlistedEntry(
    const fs::path& dir, std::span<const std::string_view> files,
    const std::function<Status(const fs::path&, const std::string&)>& on_listed) {
  std::unordered_set<std::string> listed;
  std::unordered_set<std::string> folders;
  for (std::string_view f : files) {
    listed.insert(std::string(f));
    for (fs::path p = fs::path(f).parent_path(); !p.empty(); p = p.parent_path()) folders.insert(p.generic_string());
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string rel = it->path().lexically_relative(dir).generic_string();
    const fs::file_status st = it->symlink_status(ec);
    if (fs::is_directory(st) && folders.contains(rel)) continue;
    if (fs::is_regular_file(st) && listed.contains(rel)) {
      PARITY_RETURN_IF_ERROR(on_listed(it->path(), rel));
      continue;
    }
    return rel;
  }
  if (ec) return InvalidArgument(fmt::format("{}: cannot list the folder: {}", dir.string(), ec.message()));
  return std::nullopt;
}

Result<StagedDir> StageOutputDir(const fs::path& dir, std::string_view kind, std::span<const std::string_view> files) {
  PARITY_RETURN_IF_ERROR(CheckReplaceableOutputDir(dir, kind, files));
  PARITY_ASSIGN_OR_RETURN(StagedDir staged, StagedDir::Create(dir));
  PARITY_RETURN_IF_ERROR(
      WriteFileAtomic(staged.path() / kOutputMarker, std::string(kind) + "\n", Sync::kByFolder));
  return staged;
}

}  // namespace parity
