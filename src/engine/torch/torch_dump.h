// The PyTorch dump directory of docs/contract.md ("Files"): what python/parity/torch
// writes and `--reference torch:DIR` / `--torch DIR` read.
//
// LoadTorchDump reads and validates `DIR/manifest.json` only; layer tensors
// are read one at a time (LoadLayer), so a caller walking the layers holds
// one PyTorch tensor in memory at a time.
//
// All functions are thread-safe (they only read files).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace parity {

inline constexpr std::string_view kTorchDumpSchema = "parity.torch_dump/1";

// One tensor a module returned (a `layers` entry).
// A tensor a module call received (optional "inputs" of a layer entry; the
// dumper writes them to tell a module's own error from its input's).
struct TorchLayerInput {
  std::string file;   // relative to the dump directory
  int64_t index = 0;  // position among the call's flattened tensor arguments
  std::string dtype;
  Shape shape;
};

struct TorchLayer {
  std::string file;                     // relative to the dump directory
  std::string module;                   // module path: "layer1.0.conv1"
  std::string type;                     // class name: "Conv2d"
  int64_t call = 0;                     // which call of the module (0 for the first)
  std::optional<int64_t> output_index;  // position in the flattened output; none for a single tensor
  std::string dtype;                    // as written: "float32", "bfloat16", ...
  Shape shape;
  std::optional<bool> is_leaf;  // optional extra field (parity.torch writes it)
  std::vector<TorchLayerInput> inputs;  // optional: what the call received
};

// What the user asked the exporter for (the optional `export` record).
struct TorchExportRecord {
  std::string exporter;  // "torchscript" or "dynamo"
  std::string sha256;    // `onnx_sha256`: of the exported .onnx file, when recorded; else empty
  std::vector<std::string> onnx_input_names;   // `onnx_input_names`: the graph's, as written
  std::vector<std::string> onnx_output_names;  // `onnx_output_names`
  std::optional<int64_t> opset;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::map<std::string, std::map<std::string, std::string>> dynamic_axes;  // input -> axis -> label
  // `tracer_warnings`: what the exporter warned about values it turned into
  // constants ("models.py:124: Converting a tensor to a Python float ...").
  std::vector<std::string> tracer_warnings;
  // `unread_inputs`: of the inputs the export dropped, those PyTorch's
  // outputs did not change with when the dumper changed them (an unused
  // input, not one the export froze at its traced value). Absent in dumps
  // made before it.
  std::optional<std::vector<std::string>> unread_inputs;
};

// ONNX name -> file, in the manifest's order.
using TorchFiles = std::vector<std::pair<std::string, std::string>>;

// One sample of a dump: the traced one (the top-level inputs/outputs, named
// "traced") or one of `sizes` (the same model at other input sizes; outputs
// only, no layers).
struct TorchDumpSample {
  std::string name;
  TorchFiles inputs;
  TorchFiles outputs;
  TorchFiles outputs_fp64;  // empty when not dumped
};

struct TorchDump {
  std::filesystem::path dir;
  std::string schema;
  std::string torch_version;
  // ONNX name -> file, in the manifest's order.
  TorchFiles inputs;
  TorchFiles outputs;
  TorchFiles outputs_fp64;  // empty when not dumped
  std::vector<TorchLayer> layers;  // execution order (module forwards finishing)
  std::optional<TorchExportRecord> export_record;
  // Whether symlinks inside `dir` are followed (TorchDumpOptions).
  bool allow_symlinks = false;
  // `sizes`: the samples at other sizes (none in a dump made before them).
  std::vector<TorchDumpSample> sizes;
  // `sizes_refused`: "width4: <the error PyTorch raised>" per size left out.
  std::vector<std::string> sizes_refused;
  // Inputs PyTorch took that the model does not have (an exporter dropped
  // them: unused, or traced as a constant), by name; left out of `inputs`
  // and of every size's inputs by LoadFittingDump (dump_check.h).
  std::vector<std::string> dropped_inputs;

  // Every sample: the traced one first, then `sizes`.
  std::vector<TorchDumpSample> Samples() const;

  // Whether layer i's module has no submodules: the manifest's `is_leaf` when
  // given, else no other dumped module lies under its path.
  bool IsLeaf(size_t i) const;
  // "layer1.0.relu", "act (call 1)", "halves [out 1]": for messages and reports.
  static std::string Describe(const TorchLayer& layer);
};

// Reads DIR/manifest.json. Errors name the file and the key:
//   kNotFound         DIR or its manifest.json does not exist ("a dump without
//                     manifest.json is incomplete");
//   kInvalidArgument  malformed JSON, another schema, a required key missing
//                     or of the wrong type ("manifest.json: layers[3].shape:
//                     expected an array of non-negative integers, got a string"),
//                     a file path that leaves the directory.
// Extra keys are allowed everywhere. Files are not opened.
//
// A dump's files are its own (docs/security.md): unless `allow_symlinks`,
// manifest.json, and later every file LoadLayer & co. read, is refused
// (kInvalidArgument naming the path and the flag --allow-symlinks) when it or
// a folder on its way below DIR is a symlink. DIR itself may be one.
struct TorchDumpOptions {
  bool allow_symlinks = false;
};
Result<TorchDump> LoadTorchDump(const std::filesystem::path& dir, const TorchDumpOptions& options = {});

// Reads one layer's tensor and checks it against the manifest (dtype, shape):
// kCorrupt when they disagree. Errors name the file.
Result<Tensor> LoadLayer(const TorchDump& dump, const TorchLayer& layer);

// The dump's inputs / outputs, named by their ONNX names, in manifest order.
// The tensor of one module input; errors as LoadLayer.
Result<Tensor> LoadLayerInput(const TorchDump& dump, const TorchLayerInput& input);

// The tensors of one file list of the dump (a sample's inputs, outputs...).
Result<TensorSet> LoadTorchFiles(const TorchDump& dump, const TorchFiles& files);

Result<TensorSet> LoadTorchInputs(const TorchDump& dump);
Result<TensorSet> LoadTorchOutputs(const TorchDump& dump);
// The float64 copy's outputs (`outputs_fp64`); empty when none were dumped.
Result<TensorSet> LoadTorchOutputsFp64(const TorchDump& dump);

}  // namespace parity
