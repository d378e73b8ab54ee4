// Reading a PyTorch dump directory: its manifest (torch_manifest.cc) and its
// tensor files, each one kept inside the dump folder (no symlink followed
// unless asked) and checked against what the manifest says.
#include "engine/torch/torch_dump.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/npy.h"
#include "core/regular_file.h"
#include "engine/torch/torch_manifest.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// DIR/FILE, unless it or a folder between DIR and it is a symlink (a layer
// file linked to an outside .npy was read and its values reported; a linked
// folder leaked file sizes).
Result<fs::path> DumpFile(const fs::path& dir, const std::string& file, bool allow_symlinks) {
  fs::path path = dir;
  for (const fs::path& part : fs::path(file)) {
    path /= part;
    std::error_code ec;
    if (!allow_symlinks && fs::is_symlink(fs::symlink_status(path, ec)))
      return InvalidArgument(fmt::format(
          "{}: is a symlink inside the dump directory; parity reads only the dump's own files "
          "(pass --allow-symlinks to follow it)",
          path.string()));
  }
  return path;
}

Result<TensorSet> LoadNamed(const TorchDump& dump,
                            const std::vector<std::pair<std::string, std::string>>& files) {
  TensorSet out;
  for (const auto& [name, file] : files) {
    PARITY_ASSIGN_OR_RETURN(fs::path path, DumpFile(dump.dir, file, dump.allow_symlinks));
    PARITY_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
    PARITY_RETURN_IF_ERROR(out.Add(name, std::move(t)));
  }
  return out;
}

}  // namespace

bool TorchDump::IsLeaf(size_t i) const {
  const TorchLayer& layer = layers[i];
  if (layer.is_leaf) return *layer.is_leaf;
  const std::string prefix = layer.module + ".";
  for (const TorchLayer& other : layers)
    if (other.module.starts_with(prefix)) return false;
  return true;
}

std::string TorchDump::Describe(const TorchLayer& layer) {
  std::string out = layer.module;
  if (layer.call > 0) out += fmt::format(" (call {})", layer.call);
  if (layer.output_index) out += fmt::format(" [out {}]", *layer.output_index);
  return out;
}

Result<TorchDump> LoadTorchDump(const fs::path& dir, const TorchDumpOptions& options) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return InvalidArgument(fmt::format(
        "{}: is a file, not a PyTorch dump directory (a dump is the folder python -m parity.torch dump -o DIR writes)",
        dir.string()));
  if (!fs::is_directory(dir, ec))
    return NotFound(fmt::format("{}: not a PyTorch dump directory (no such directory)", dir.string()));
  PARITY_ASSIGN_OR_RETURN(const fs::path manifest, DumpFile(dir, "manifest.json", options.allow_symlinks));
  auto text = ReadRegularFile(manifest, kMaxManifestBytes);
  if (!text && text.error().code() == ErrorCode::kNotFound)
    return NotFound(
        fmt::format("{}: cannot be read (a dump without manifest.json is incomplete)", manifest.string()));
  if (!text) return std::unexpected(text.error());
  auto dump = ParseTorchManifest(*text, manifest.string());
  if (!dump) return dump;
  dump->dir = dir;
  dump->allow_symlinks = options.allow_symlinks;
  return dump;
}

Result<Tensor> LoadLayer(const TorchDump& dump, const TorchLayer& layer) {
  PARITY_ASSIGN_OR_RETURN(const fs::path path, DumpFile(dump.dir, layer.file, dump.allow_symlinks));
  PARITY_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
  const auto dtype = DTypeFromName(layer.dtype);
  if (dtype && *dtype != t.dtype())
    return Corrupt(fmt::format("{}: dtype {} but the manifest says {}", path.string(), DTypeName(t.dtype()),
                               layer.dtype));
  if (t.shape() != layer.shape)
    return Corrupt(fmt::format("{}: shape {} but the manifest says {}", path.string(),
                               ShapeToString(t.shape()), ShapeToString(layer.shape)));
  return t;
}

Result<Tensor> LoadLayerInput(const TorchDump& dump, const TorchLayerInput& input) {
  PARITY_ASSIGN_OR_RETURN(const fs::path path, DumpFile(dump.dir, input.file, dump.allow_symlinks));
  PARITY_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
  if (t.shape() != input.shape)
    return Corrupt(fmt::format("{}: shape {} but the manifest says {}", path.string(), ShapeToString(t.shape()),
                               ShapeToString(input.shape)));
  return t;
}

std::vector<TorchDumpSample> TorchDump::Samples() const {
  std::vector<TorchDumpSample> all{{"traced", inputs, outputs, outputs_fp64}};
  all.insert(all.end(), sizes.begin(), sizes.end());
  return all;
}

Result<TensorSet> LoadTorchFiles(const TorchDump& dump, const TorchFiles& files) { return LoadNamed(dump, files); }
Result<TensorSet> LoadTorchInputs(const TorchDump& dump) { return LoadNamed(dump, dump.inputs); }
Result<TensorSet> LoadTorchOutputs(const TorchDump& dump) { return LoadNamed(dump, dump.outputs); }
Result<TensorSet> LoadTorchOutputsFp64(const TorchDump& dump) { return LoadNamed(dump, dump.outputs_fp64); }

}  // namespace parity
