#include "engine/dataset/dataset_source.h"
#include "engine/run/tensor_source.h"

#include <glob.h>

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "engine/load/samples.h"

namespace parity {
namespace fs = std::filesystem;

namespace {

bool IsSampleFile(const fs::directory_entry& e) {
  std::error_code ec;
  if (!e.is_regular_file(ec)) return false;
  const std::string ext = e.path().extension().string();
  return ext == ".npz" || ext == ".npy";
}

Result<std::vector<fs::path>> ListDirectory(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code dir_ec;
    if (IsSampleFile(*it) || (it->is_directory(dir_ec) && !it->is_symlink(dir_ec))) entries.push_back(it->path());
  }
  if (ec) return InvalidArgument(fmt::format("{}: cannot list the dataset folder: {}", dir.string(), ec.message()));
  if (entries.empty())
    return InvalidArgument(
        fmt::format("{}: no sample files (.npz, .npy) or per-sample folders in the dataset folder", dir.string()));
  std::sort(entries.begin(), entries.end());
  return entries;
}

Result<std::vector<fs::path>> ListGlob(const std::string& pattern) {
  glob_t g{};
  const int rc = glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
  std::vector<fs::path> entries;
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) entries.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  if (rc != 0 && rc != GLOB_NOMATCH)
    return InvalidArgument(fmt::format("{}: the dataset pattern could not be expanded", pattern));
  if (entries.empty()) return InvalidArgument(fmt::format("{}: no sample files match the dataset pattern", pattern));
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

Result<std::vector<fs::path>> ListDatasetEntries(const std::string& source) {
  if (source.empty()) return InvalidArgument("--dataset: empty path");
  std::error_code ec;
  if (fs::is_directory(source, ec)) return ListDirectory(source);
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

Result<std::vector<Sample>> LoadDatasetReference(const fs::path& dir, const fs::path& entry) {
  const fs::path file = dir / (EntryStem(entry) + ".npz");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    return NotFound(fmt::format("{}: no reference outputs for this entry (--reference-outputs)", file.string()));
  return LoadSamples(file);
}

const TensorSet* FindDatasetReference(const std::vector<Sample>& stored, const Sample& sample, size_t samples_in_entry) {
  if (samples_in_entry == 1 && stored.size() == 1) return &stored.front().tensors;
  for (const Sample& s : stored)
    if (s.name == sample.name) return &s.tensors;
  return nullptr;
}

Result<std::vector<Sample>> LoadDatasetEntry(const ModelInfo& info, const fs::path& path,
                                             const std::string& model_label) {
  return LoadSamplesFor(info, path, {.model_label = model_label});
}

}  // namespace parity
