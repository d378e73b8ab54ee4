// Checks made before any run: do the given inputs fit the model (whether a
// PyTorch dump belongs to it: engine/torch/dump_check.h). A mistake here is the user's (exit 2, one line),
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

// Whether a tensor of `shape` fits the declared type: the rank and every
// known dim equal (symbolic and unknown dims take any size).
bool ShapeFits(const TensorType& t, const Shape& shape);
// The declared type as a person reads it: "float32 [batch, 3, 224, 224]".
std::string DeclaredType(const TensorType& t);

// Levenshtein distance, for "did you mean" (a plain O(n*m) table; names are
// short).
size_t EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `name` within a distance of max(2, |name|/3), or "".
std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" with ClosestName's pick, or "" when none is close.
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace parity
