// Where a baseline may be written: a new or empty folder, or with
// --overwrite an earlier parity baseline holding nothing but its own files
// (docs/security.md "Output folders").
#include <system_error>

#include <fmt/format.h>

#include "core/input_files.h"
#include "core/output_dir.h"
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
  std::vector<std::string_view> listed(files.begin(), files.end());
  listed.push_back("manifest.json");
  PARITY_ASSIGN_OR_RETURN(auto unlisted, FirstUnlistedEntry(dir, listed, [](const fs::path& path, const std::string& rel) {
                            return rel == "manifest.json" ? Status{} : WithContext(CheckNotAnInput(path), "--overwrite");
                          }));
  if (unlisted)
    return InvalidArgument(fmt::format(
        "{}: --overwrite replaces only what a parity baseline wrote, and '{}' is not one of its files; "
        "move it away or give another folder",
        dir.string(), *unlisted));
  return {};
}

}  // namespace parity::baseline_internal
