#include "core/output_dir.h"

#include <fmt/format.h>

#include <string>

#include "core/atomic_file.h"
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

}  // namespace parity
