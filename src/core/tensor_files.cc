#include "core/tensor_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "core/input_files.h"
#include "core/npy.h"

namespace parity {
namespace {

// NAME_MAX of Linux file systems (ext4, xfs, tmpfs).
constexpr size_t kMaxFileName = 255;

// The bytes TensorFileStem escapes, by their two hex digits.
std::optional<char> Unescaped(std::string_view hex) {
  if (hex == "25") return '%';
  if (hex == "2F") return '/';
  if (hex == "00") return '\0';
  if (hex == "2E") return '.';
  return std::nullopt;
}

}  // namespace

// Written here: percent-encoding of three bytes is shorter than binding a
// URL library for it.
std::string TensorFileStem(std::string_view name) {
  if (name == ".") return "%2E";
  if (name == "..") return "%2E%2E";
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == '%') out += "%25";
    else if (c == '/') out += "%2F";
    else if (c == '\0') out += "%00";
    else out += c;
  }
  return out;
}

std::string TensorNameOfFileStem(std::string_view stem) {
  std::string out;
  out.reserve(stem.size());
  for (size_t i = 0; i < stem.size(); ++i) {
    const auto c = stem[i] == '%' && i + 2 < stem.size() ? Unescaped(stem.substr(i + 1, 2)) : std::nullopt;
    out += c.value_or(stem[i]);
    if (c) i += 2;
  }
  return out;
}

Result<std::string> TensorFileName(std::string_view name) {
  if (name.empty()) return InvalidArgument("an empty tensor name cannot be a file name");
  std::string file = TensorFileStem(name) + ".npy";
  if (file.size() > kMaxFileName)
    return InvalidArgument(fmt::format("tensor name '{}...' ({} bytes) is too long for a file name", name.substr(0, 40),
                                       name.size()));
  return file;
}

Result<TensorSet> ReadNpyDir(const std::filesystem::path& dir, bool decode_names) {
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(status)) return NotFound(fmt::format("{}: no such directory", dir.string()));
  if (!std::filesystem::is_directory(status))
    return InvalidArgument(fmt::format("{}: not a directory", dir.string()));
  std::vector<std::pair<std::string, std::filesystem::path>> files;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path& p = it->path();
    if (p.extension() != ".npy" || p.stem().empty() || !it->is_regular_file(ec)) continue;
    files.emplace_back(decode_names ? TensorNameOfFileStem(p.stem().string()) : p.stem().string(), p);
  }
  if (ec) return InvalidArgument(fmt::format("{}: cannot list: {}", dir.string(), ec.message()));
  std::sort(files.begin(), files.end());
  // Decoded, two files can name one tensor ("%25.npy" and a hand-made "%.npy").
  for (size_t i = 1; i < files.size(); ++i)
    if (files[i].first == files[i - 1].first)
      return InvalidArgument(fmt::format("{}: '{}' and '{}' name the same tensor '{}'", dir.string(),
                                         files[i - 1].second.filename().string(), files[i].second.filename().string(),
                                         files[i].first));
  TensorSet out;
  for (const auto& [name, path] : files) {
    PARITY_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
    out.Set(name, std::move(t));
  }
  return out;
}

Status WriteNpyDir(const std::filesystem::path& dir, const TensorSet& tensors, Sync sync) {
  std::vector<std::string> files;
  files.reserve(tensors.size());
  for (const NamedTensor& nt : tensors) {
    auto file = TensorFileName(nt.name);
    if (!file) return std::unexpected(file.error().With(dir.string()));
    files.push_back(std::move(*file));
  }
  // No file is written when one of them would replace an input: a refusal
  // half-way would leave some outputs written over the folder's old files.
  for (const std::string& file : files) PARITY_RETURN_IF_ERROR(CheckNotAnInput(dir / file));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InvalidArgument(fmt::format("{}: cannot create directory: {}", dir.string(), ec.message()));
  for (size_t i = 0; i < files.size(); ++i)
    PARITY_RETURN_IF_ERROR(WriteNpy(dir / files[i], tensors[i].tensor, sync));
  return {};
}

Result<std::vector<Sample>> SplitSamples(const TensorSet& tensors) {
  std::vector<Sample> samples;
  if (tensors.empty()) return samples;
  const bool prefixed = tensors[0].name.find('/') != std::string::npos;
  for (const NamedTensor& nt : tensors) {
    const size_t slash = nt.name.find('/');
    if ((slash != std::string::npos) != prefixed)
      return InvalidArgument(fmt::format(
          "keys '{}' and '{}' mix the SAMPLE/INPUT form with bare input names; use one form for all keys",
          tensors[0].name, nt.name));
    if (!prefixed) continue;
    std::string sample = nt.name.substr(0, slash);
    std::string input = nt.name.substr(slash + 1);
    if (sample.empty() || input.empty())
      return InvalidArgument(
          fmt::format("key '{}' has an empty sample or input name (expected SAMPLE/INPUT)", nt.name));
    auto it = std::find_if(samples.begin(), samples.end(), [&](const Sample& s) { return s.name == sample; });
    if (it == samples.end())
      it = samples.insert(samples.end(), Sample{.name = std::move(sample), .tensors = {}});
    it->tensors.Set(std::move(input), nt.tensor);
  }
  if (!prefixed) samples.push_back(Sample{.name = "default", .tensors = tensors});
  return samples;
}

TensorSet JoinSamples(const std::vector<Sample>& samples) {
  TensorSet out;
  if (samples.size() == 1 && samples[0].name == "default") return samples[0].tensors;
  for (const Sample& s : samples)
    for (const NamedTensor& nt : s.tensors) out.Set(s.name + "/" + nt.name, nt.tensor);
  return out;
}

}  // namespace parity
