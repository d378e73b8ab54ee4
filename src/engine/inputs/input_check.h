// Checks made before any run: do the given inputs fit the model, does a
// PyTorch dump belong to it. A mistake here is the user's (exit 2, one line),
// never a model failure: `check` would otherwise print FAIL for a wrong input
// name, and `run` would surface ORT's error as a runtime failure.
//
// The one input-binding rule of every command (LoadSamples applies it when it
// knows the model's inputs, see tensor_source.h):
//   1. a tensor whose name is an input's binds to that input;
//   2. otherwise a name "input_<X>" (the file name baseline and PyTorch dump
//      directories use) binds to input X;
//   3. a lone tensor file (.npy, .pb) binds to a model's only input whatever
//      its name.
// Keys of an .npz are never guessed beyond rule 2: a key that names no input
// is an error with the closest input name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/torch/torch_dump.h"
#include "onnx/inspect.h"

namespace parity {

// Rule 2 on one tensor set; tensors already named for an input are kept.
TensorSet BindInputNames(const TensorSet& tensors, const std::vector<std::string>& input_names);

// Every sample against the model's declared inputs: each input present, no
// tensor that is not an input, the dtype equal, the rank and every known
// dimension equal (symbolic and unknown dims take any size). Invalid argument
// naming `source` (and `model_label` when given), the sample, the input and
// both sides; when there are several problems the first is named and the
// rest counted.
Status CheckInputs(const std::vector<Sample>& samples, const std::vector<ValueInfo>& inputs,
                   std::string_view source, std::string_view model_label = "");

// Whether `dump` was made for the model: its input names must be the
// model's inputs and its output names among the model's outputs, its input
// tensors must pass CheckInputs and its output tensors must have the dtype
// and the known dims the model declares. Reads the dump's input and output
// files. Invalid argument on a mismatch, naming the dump and what differs.
// When the export record carries the exported file's sha256 and it is none
// of `model_sha256s` (the model, or the model it was derived from), `*note`
// says so: a hand-patched or simplified model differs from its export by
// design, so that alone is not an error (a dump from another model is caught
// by the names, the shapes, or later by alignment: CheckSomeLayerAligned).
Status CheckDumpFitsModel(const TorchDump& dump, const ModelInfo& model, const std::string& model_label,
                          const std::vector<std::string>& model_sha256s, std::string* note);

// CheckDumpFitsModel with the sha256 of each file in `model_paths` (the
// model first, then the model it was derived from, if any; empty paths are
// skipped).
Status CheckDumpFitsModelFiles(const TorchDump& dump, const ModelInfo& model,
                               const std::vector<std::string>& model_paths, std::string* note);

// After alignment: a dump none of whose layers aligns with the model was made
// from another model (invalid argument); `aligned` counts the aligned layers.
Status CheckSomeLayerAligned(const TorchDump& dump, size_t aligned, const std::string& model_label);

// Levenshtein distance, for "did you mean" (a plain O(n*m) table; names are
// short).
size_t EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `name` within a distance of max(2, |name|/3), or "".
std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace parity
