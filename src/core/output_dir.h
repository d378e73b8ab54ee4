// Output folders parity fills with several files (a repro, a report, a demo):
// parity never overwrites or deletes a file it did not write itself
// (docs/security.md "Output folders"). A folder parity filled carries a
// marker file, `.parity-output`, whose one line names what wrote it
// ("parity.repro", "parity.report"); only such a folder, an empty one or a
// missing one is written to.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <span>
#include <string_view>

#include "core/staged_dir.h"
#include "core/status.h"

namespace parity {

inline constexpr std::string_view kOutputMarker = ".parity-output";

// Whether `dir` may receive output of `kind`: it does not exist, or is an
// empty directory, or holds the marker of `kind`. Touches nothing. Errors
// (kInvalidArgument, naming dir): not a directory; a non-empty folder without
// the marker (it holds the user's own files); a marker of another kind.
Status CheckOutputDir(const std::filesystem::path& dir, std::string_view kind);

// CheckOutputDir, then creates `dir` if needed and writes the marker (whole).
Status ClaimOutputDir(const std::filesystem::path& dir, std::string_view kind);

// Whether `dir` may be replaced whole by output of `kind` that consists of
// `files` (paths relative to dir, '/'-separated): CheckOutputDir, `dir` is
// not a symbolic link, and a non-empty `dir` holds nothing but the marker,
// `files` and their folders, none of them an input of this command, so that
// replacing it deletes only what parity wrote there. Touches nothing.
Status CheckReplaceableOutputDir(const std::filesystem::path& dir, std::string_view kind,
                                 std::span<const std::string_view> files);

// The first entry of `dir` (relative, '/'-separated; the walk does not follow
// symbolic links) that is neither a regular file among `files` nor one of
// their folders, or nullopt when there is none. Each listed file found is
// passed to `on_listed(path, rel)` first; its error ends the walk. The rule
// of every "replace only what parity wrote" check (a run folder, a baseline).
Result<std::optional<std::string>> FirstUnlistedEntry(
    const std::filesystem::path& dir, std::span<const std::string_view> files,
    const std::function<Status(const std::filesystem::path&, const std::string&)>& on_listed);

// Folders written whole or not at all (core/staged_dir.h): checks
// CheckReplaceableOutputDir, then makes the staging folder beside `dir` with
// the marker of `kind` in it. The caller writes `files` into path() and calls
// Commit(/*replace=*/true); an error or an interrupt before that leaves `dir`
// as it was.
Result<StagedDir> StageOutputDir(const std::filesystem::path& dir, std::string_view kind,
                                 std::span<const std::string_view> files);

}  // namespace parity
