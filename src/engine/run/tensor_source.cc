#include "engine/run/tensor_source.h"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "core/npy.h"
#include "core/npz.h"
#include "core/own_tree.h"
#include "core/output_dir.h"
#include "core/tensor_files.h"
#include "engine/inputs/input_check.h"
#include "onnx/tensor_proto.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

bool HasExtension(const fs::path& p, std::string_view ext) { return p.extension() == ext; }

// A directory is ONNX test data when it holds input_N.pb/output_N.pb files.
bool IsPbDirectory(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".pb") return true;
  return false;
}

// The input_<X>.npy files of one folder, sorted by name, under `prefix`.
Status AddInputFiles(const fs::path& dir, const std::string& prefix, TensorSet& out) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.starts_with("input_") && HasExtension(entry.path(), ".npy"))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    PARITY_ASSIGN_OR_RETURN(Tensor t, ReadNpy(f));
    PARITY_RETURN_IF_ERROR(out.Add(prefix + f.stem().string(), std::move(t)));
  }
  return {};
}

// A PyTorch dump (python -m parity.torch dump -o DIR): manifest.json beside
// input_<X>.npy files, which bind to input X (docs/errors.md); its outputs
// and layers are no inputs. The samples it holds at other sizes
// (sizes/NAME/input_<X>.npy) are samples of their own, the traced one
// "traced".
bool IsTorchDumpDirectory(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "manifest.json", ec)) return false;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename().string().starts_with("input_") && HasExtension(entry.path(), ".npy")) return true;
  return false;
}

Result<TensorSet> LoadTorchDumpInputs(const fs::path& dir) {
  std::vector<fs::path> sizes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / "sizes", ec))
    if (entry.is_directory()) sizes.push_back(entry.path());
  std::sort(sizes.begin(), sizes.end());
  TensorSet out;
  PARITY_RETURN_IF_ERROR(AddInputFiles(dir, sizes.empty() ? "" : "traced/", out));
  for (const auto& d : sizes) PARITY_RETURN_IF_ERROR(AddInputFiles(d, d.filename().string() + "/", out));
  return out;
}

Result<TensorSet> LoadPbDirectory(const fs::path& dir, const TensorSourceOptions& o) {
  PARITY_ASSIGN_OR_RETURN(TestDataSet data, ReadTestDataSet(dir, o.input_names, o.output_names));
  return o.pb_outputs ? std::move(data.outputs) : std::move(data.inputs);
}

}  // namespace

Result<TensorSet> LoadTensors(const fs::path& path, const TensorSourceOptions& o) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return NotFound(fmt::format("{}: no such file or directory", path.string()));
  if (fs::is_directory(status)) {
    PARITY_RETURN_IF_ERROR(CheckOwnTree(path, o.allow_symlinks, o.symlink_hint));
    if (IsPbDirectory(path)) return LoadPbDirectory(path, o);
    if (IsTorchDumpDirectory(path)) return LoadTorchDumpInputs(path);
    // A folder `run -o` wrote (its marker) holds percent-encoded names.
    const bool ours = fs::exists(path / kOutputMarker, ec) && CheckOutputDir(path, kTensorDirKind).has_value();
    return ReadNpyDir(path, /*decode_names=*/ours);
  }
  if (HasExtension(path, ".npz")) return ReadNpz(path);
  if (HasExtension(path, ".npy")) {
    PARITY_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
    TensorSet set;
    std::string name = o.input_names.size() == 1 ? o.input_names[0] : path.stem().string();
    PARITY_RETURN_IF_ERROR(set.Add(std::move(name), std::move(t)));
    return set;
  }
  if (HasExtension(path, ".pb")) {
    std::string name;
    PARITY_ASSIGN_OR_RETURN(Tensor t, ReadTensorProtoFile(path, &name));
    if (name.empty()) name = o.input_names.size() == 1 ? o.input_names[0] : path.stem().string();
    TensorSet set;
    PARITY_RETURN_IF_ERROR(set.Add(std::move(name), std::move(t)));
    return set;
  }
  return InvalidArgument(
      fmt::format("{}: unknown tensor file kind (expected .npz, .npy, .pb, or a directory of .npy or .pb files)",
                  path.string()));
}

Result<std::vector<Sample>> LoadSamples(const fs::path& path, const TensorSourceOptions& o) {
  PARITY_ASSIGN_OR_RETURN(TensorSet set, LoadTensors(path, o));
  PARITY_ASSIGN_OR_RETURN(std::vector<Sample> samples, WithContext(SplitSamples(set), path.string()));
  if (!o.input_names.empty())
    for (Sample& s : samples) s.tensors = BindInputNames(s.tensors, o.input_names);
  return samples;
}

Status SaveTensors(const fs::path& path, const TensorSet& tensors) {
  if (HasExtension(path, ".npz")) return WriteNpz(path, tensors);
  // The folder is staged whole (core/output_dir.h): a refusal (a name that
  // is no file name, one of the files an input, a user's file in an earlier
  // folder), a failure half-way or an interrupt leaves `path` as it was.
  // Names are percent-encoded into file names (TensorFileStem): every
  // ONNX tensor, "/layer1/conv/Conv_output_0" included, has its file.
  std::vector<std::string> names;
  names.reserve(tensors.size());
  for (const NamedTensor& nt : tensors) {
    auto file = TensorFileName(nt.name);
    if (!file)
      return InvalidArgument(fmt::format("{}: {}; write FILE.npz instead", path.string(), file.error().message()));
    names.push_back(std::move(*file));
  }
  const std::vector<std::string_view> files(names.begin(), names.end());
  PARITY_ASSIGN_OR_RETURN(StagedDir staged, StageOutputDir(path, kTensorDirKind, files));
  PARITY_RETURN_IF_ERROR(WriteNpyDir(staged.path(), tensors, Sync::kByFolder));
  return staged.Commit(/*replace=*/true);
}

}  // namespace parity
