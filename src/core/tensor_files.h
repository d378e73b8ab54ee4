// Tensor sets on disk as a directory of .npy files, and the sample naming
// convention of docs/contract.md ("Files"): in one tensor set, keys `SAMPLE/INPUT`
// ("typical/images", "anomaly_nan/images") group inputs into samples, and
// keys without '/' form the single sample "default".
// (.npz lives in npz.h; ONNX TensorProto .pb files in the ONNX adapter.)
// All functions are thread-safe.
#pragma once

#include <filesystem>
#include <vector>

#include "core/atomic_file.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity {

// How a tensor name becomes a file stem in a folder parity writes, and
// back: '%', '/' and NUL percent-encoded ("%25", "%2F", "%00"), and the
// names "." and ".." as "%2E" and "%2E%2E", so that every name but the
// empty one has a file and no two names share one (an ONNX tensor
// "/layer1/conv/Conv_output_0" is "%2Flayer1%2Fconv%2FConv_output_0.npy").
// Decoding undoes only those escapes and leaves any other '%' as it is.
std::string TensorFileStem(std::string_view name);
std::string TensorNameOfFileStem(std::string_view stem);

// Reads every regular file `*.npy` of `dir` (not recursively) as a tensor
// named by the file stem (decoded by TensorNameOfFileStem when
// `decode_names`: a folder WriteNpyDir filled), sorted by name (bytewise).
// Other files (a manifest.json, ...) and subdirectories are ignored; an
// empty directory gives an empty set. Errors: kNotFound when `dir` does not
// exist, kInvalidArgument when it is not a directory or two files decode to
// one name, else the first file's error (which names the file).
Result<TensorSet> ReadNpyDir(const std::filesystem::path& dir, bool decode_names = false);

// Writes each tensor to `dir/STEM.npy`, STEM = TensorFileStem(name)
// (creating `dir`), each file atomically (the directory as a whole is not).
// Refused (kInvalidArgument, checked for all names before anything is
// written): an empty name; a stem longer than a file name may be.
// `sync`: Sync::kByFolder inside a StagedDir (it syncs the folder once) or
// a scratch folder (never read after the process).
Status WriteNpyDir(const std::filesystem::path& dir, const TensorSet& tensors, Sync sync = Sync::kEach);

// The file name (stem + ".npy") WriteNpyDir gives `name`, or
// kInvalidArgument saying why it has none.
Result<std::string> TensorFileName(std::string_view name);

// Splits keys at their first '/' into sample and input names (the input name
// may itself contain '/'). Samples are ordered by first appearance, inputs in
// key order. All keys without '/' give one sample "default". An empty set
// gives no samples. Errors (kInvalidArgument): keys with and without '/'
// mixed; an empty sample or input name ("/x", "x/").
Result<std::vector<Sample>> SplitSamples(const TensorSet& tensors);

// The inverse of SplitSamples: a single sample named "default" gives bare
// keys, anything else gives `SAMPLE/INPUT` keys. Precondition: sample names
// are unique and contain no '/'.
TensorSet JoinSamples(const std::vector<Sample>& samples);

}  // namespace parity
