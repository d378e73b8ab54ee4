// Where a baseline may be written: a new or empty folder, or with
// --overwrite an earlier parity baseline holding nothing but its own files
// (docs/security.md "Output folders").
#include <system_error>
#include <unordered_set>

#include <fmt/format.h>

#include "core/input_files.h"
#include "core/regular_file.h"
#include "engine/baseline/baseline_internal.h"

namespace fs = std::filesystem;

namespace parity::baseline_internal {
namespace {

// The files of the parity baseline in `dir`, relative to it; kInvalidArgument
// when `dir` holds no manifest.json of schema parity.baseline/1.
Result<std::vector<std::string>> BaselineFilesToReplace(const fs::path& dir) {
  const std::string refuse = fmt::format(
      "{}: --overwrite only replaces a baseline parity wrote (no parity.baseline/1 manifest.json there)",
      dir.string());
  auto text = ReadRegularFile(dir / "manifest.json", kMaxManifestBytes);
  if (!text) return InvalidArgument(refuse);
  auto parsed = baseline_internal::ParseManifest(*text, (dir / "manifest.json").string());
  if (!parsed) return InvalidArgument(fmt::format("{} ({})", refuse, parsed.error().message()));
  std::vector<std::string> files;
  for (const auto& s : parsed->samples)
    for (const auto& f : s.files) files.push_back(f.file);
  return files;
}

// Whether the baseline may go to `dir`, checked before anything is written
// (nothing is deleted here: the new baseline is staged and put in place whole,
// core/staged_dir.h). A non-empty `dir` is replaced only with `overwrite`, only
// when it is a baseline parity wrote (a parity.baseline/1 manifest), holds
// nothing its manifest does not list (docs/security.md "Output folders") and
// none of this command's inputs.
}  // namespace

Status CheckTargetDir(const fs::path& dir, bool overwrite) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return InvalidArgument(fmt::format("{}: exists and is not a directory", dir.string()));
  if (!fs::exists(dir, ec) || fs::is_empty(dir, ec)) return {};
  if (!overwrite)
    return InvalidArgument(
        fmt::format("{}: directory is not empty (use --overwrite to replace a baseline)", dir.string()));
  PARITY_ASSIGN_OR_RETURN(std::vector<std::string> files, BaselineFilesToReplace(dir));
  std::unordered_set<std::string> listed(files.begin(), files.end());
  std::unordered_set<std::string> folders;
  for (const auto& f : files)
    for (fs::path p = fs::path(f).parent_path(); !p.empty(); p = p.parent_path()) folders.insert(p.generic_string());
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    const auto st = it->symlink_status(ec);
    if (fs::is_directory(st) && folders.contains(rel)) continue;
    if (fs::is_regular_file(st) && rel == "manifest.json") continue;
    if (fs::is_regular_file(st) && listed.contains(rel)) {
      PARITY_RETURN_IF_ERROR(WithContext(CheckNotAnInput(it->path()), "--overwrite"));
      continue;
    }
    return InvalidArgument(fmt::format(
        "{}: --overwrite replaces only what a parity baseline wrote, and '{}' is not one of its files; "
        "move it away or give another folder",
        dir.string(), rel));
  }
  if (ec) return InvalidArgument(fmt::format("{}: cannot list: {}", dir.string(), ec.message()));
  return {};
}

}  // namespace parity::baseline_internal
