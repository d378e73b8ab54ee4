// Where tensors come from and go to, by file kind: the one place that
// dispatches on a path. Readers themselves live in core/ (.npy, .npz, .npy
// directories) and onnx/ (TensorProto .pb).
//
// Accepted inputs:
//   FILE.npz            keys NAME, or SAMPLE/NAME for several samples
//   FILE.npy            one tensor, named by the model's only input (or the stem)
//   DIR of .npy         one tensor per file, named by the stem
//   DIR of .pb          ONNX test data: input_N.pb / output_N.pb, named by the
//                       proto's name or the model's input order
//   FILE.pb             one TensorProto
// Errors name the path and say what was expected.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace parity {

struct TensorSourceOptions {
  // The model's input names, used to name unnamed tensors (.pb without a
  // name, a lone .npy). Empty when there is no model.
  std::vector<std::string> input_names;
  // For a .pb directory: read output_N.pb instead of input_N.pb.
  bool pb_outputs = false;
  std::vector<std::string> output_names;
  // A folder's files must be its own (core/own_tree.h): a symlink below it
  // is refused unless allowed; `symlink_hint` names the flag that allows it.
  bool allow_symlinks = false;
  std::string symlink_hint;
};

Result<TensorSet> LoadTensors(const std::filesystem::path& path, const TensorSourceOptions& options = {});

// LoadTensors, then split by the SAMPLE/INPUT convention; with input_names,
// each sample's tensors are bound to them by the rule of input_check.h.
Result<std::vector<Sample>> LoadSamples(const std::filesystem::path& path,
                                        const TensorSourceOptions& options = {});

// The marker (core/output_dir.h) of a folder SaveTensors filled.
inline constexpr std::string_view kTensorDirKind = "parity.run";

// Writes a tensor set: `.npz` (deflated, one whole file) by extension, else a
// folder of STEM.npy files (STEM = TensorFileStem(name), core/tensor_files.h;
// LoadTensors decodes them in a folder with this marker) written whole or not at all: staged beside `path`
// with the marker kTensorDirKind and put in place once complete
// (StageOutputDir). `path` must be new, empty, or an earlier such folder
// holding nothing but the marker and these files, none of them an input
// (kInvalidArgument naming what is in the way); it is then left as it was on
// any error. Refused: an empty name, a name too long for a file name.
Status SaveTensors(const std::filesystem::path& path, const TensorSet& tensors);

}  // namespace parity
