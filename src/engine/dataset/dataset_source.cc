#include "engine/dataset/dataset_source.h"
#include "engine/run/tensor_source.h"

#include <glob.h>

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "core/output_dir.h"
#include "core/own_tree.h"
#include "engine/load/samples.h"

namespace parity {
namespace fs = std::filesystem;

namespace {

bool HasSampleExtension(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".npz" || ext == ".npy";
}

// parity's own output folders (a report or a run's outputs left in the
// dataset folder): their marker file, whatever their kind.
bool IsOwnOutputFolder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(dir / kOutputMarker, ec));
}

Result<std::vector<fs::path>> ListDirectory(const fs::path& dir, bool allow_symlinks) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code st_ec;
    const fs::file_status own = it->symlink_status(st_ec);
    const bool sample_name = HasSampleExtension(it->path());
    const fs::file_status st = fs::is_symlink(own) ? it->status(st_ec) : own;
    if (!sample_name && !fs::is_directory(st)) continue;  // not an entry (notes.txt)
    if (fs::is_directory(st)) {
      // A symlinked folder is refused like a symlinked file (a folder elsewhere is not the dataset's).
      if (fs::is_symlink(own) && !allow_symlinks)
        return InvalidArgument(fmt::format("{}: a symlink; the files of a folder of tensors must be its own{}",
                                           it->path().string(), kDatasetSymlinkHint));
      if (!IsOwnOutputFolder(it->path())) entries.push_back(it->path());
      continue;
    }
    // A sample file must be the dataset's own regular file: a symlink or a
    // FIFO named like one is refused, never skipped silently.
    PARITY_RETURN_IF_ERROR(CheckOwnFile(it->path(), allow_symlinks, kDatasetSymlinkHint));
    entries.push_back(it->path());
  }
  if (ec) return InvalidArgument(fmt::format("{}: cannot list the dataset folder: {}", dir.string(), ec.message()));
  if (entries.empty())
    return InvalidArgument(
        fmt::format("{}: no sample files (.npz, .npy) or per-sample folders in the dataset folder", dir.string()));
  std::sort(entries.begin(), entries.end());
  return entries;
}

// The folder a glob pattern names before its first wildcard ("D" of "D/*/x.npz").
fs::path FixedPrefix(const std::string& pattern) {
  const size_t wild = pattern.find_first_of("*?[");
  const size_t slash = pattern.rfind('/', wild);
  return slash == std::string::npos ? fs::path(".") : fs::path(pattern.substr(0, slash == 0 ? 1 : slash));
}

// Whether `entry`, or a folder between it and `fixed`, is parity's own output
// folder.
bool InsideOwnOutputFolder(const fs::path& entry, const fs::path& fixed) {
  const fs::path stop = fixed.lexically_normal();
  for (fs::path p = entry.lexically_normal(); !p.empty() && p != stop && p != p.parent_path(); p = p.parent_path()) {
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(p, ec)) && IsOwnOutputFolder(p)) return true;
  }
  return false;
}

Result<std::vector<fs::path>> ListGlob(const std::string& pattern) {
  glob_t g{};
  const int rc = glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
  std::vector<fs::path> entries;
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) entries.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  if (rc != 0 && rc != GLOB_NOMATCH)
    return InvalidArgument(fmt::format("{}: the dataset pattern could not be expanded", pattern));
  // parity's own output folders are no entries, as in a folder dataset, nor
  // is anything the pattern reaches inside one (issue 56, class 10: a report
  // written into D broke every rerun of `--dataset 'D/*'`).
  const fs::path fixed = FixedPrefix(pattern);
  std::erase_if(entries, [&](const fs::path& entry) { return InsideOwnOutputFolder(entry, fixed); });
  if (entries.empty()) return InvalidArgument(fmt::format("{}: no sample files match the dataset pattern", pattern));
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

Result<std::vector<fs::path>> ListDatasetEntries(const std::string& source, bool allow_symlinks) {
  if (source.empty()) return InvalidArgument("--dataset: empty path");
  std::error_code ec;
  if (fs::is_directory(source, ec)) return ListDirectory(source, allow_symlinks);
  if (source.find_first_of("*?[") != std::string::npos) return ListGlob(source);
  if (fs::exists(source, ec)) return std::vector<fs::path>{fs::path(source)};
  return NotFound(fmt::format("{}: no such dataset folder, file or pattern", source));
}

namespace {

std::string EntryStem(const fs::path& entry) {
  return entry.has_extension() && !entry.filename().string().starts_with(".") ? entry.stem().string()
                                                                               : entry.filename().string();
}

}  // namespace

std::string DatasetSampleId(const fs::path& entry, const std::string& sample, size_t samples_in_entry) {
  const std::string stem = EntryStem(entry);
  return samples_in_entry > 1 ? stem + "/" + sample : stem;
}

Result<std::vector<Sample>> LoadDatasetReference(const fs::path& dir, const fs::path& entry, bool allow_symlinks) {
  const fs::path file = dir / (EntryStem(entry) + ".npz");
  if (auto own = CheckOwnFile(file, allow_symlinks, kDatasetSymlinkHint); !own) {
    if (own.error().code() == ErrorCode::kNotFound)
      return NotFound(fmt::format("{}: no reference outputs for this entry (--reference-outputs)", file.string()));
    return std::unexpected(own.error());
  }
  return LoadSamples(file);
}

const TensorSet* FindDatasetReference(const std::vector<Sample>& stored, const Sample& sample, size_t samples_in_entry) {
  if (samples_in_entry == 1 && stored.size() == 1) return &stored.front().tensors;
  for (const Sample& s : stored)
    if (s.name == sample.name) return &s.tensors;
  return nullptr;
}

Result<std::vector<Sample>> LoadDatasetEntry(const ModelInfo& info, const fs::path& path,
                                             const std::string& model_label, bool allow_symlinks) {
  return LoadSamplesFor(info, path, {.model_label = model_label, .allow_symlinks = allow_symlinks,
                                     .symlink_hint = std::string(kDatasetSymlinkHint)});
}

}  // namespace parity
