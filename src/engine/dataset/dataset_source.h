// Where a dataset's samples are (check --dataset SRC, docs/dataset.md):
//   DIR            its .npz and .npy files, and its sub-folders (each one
//                  sample: a folder of .npy or ONNX .pb files), sorted by name;
//   PATTERN        a glob(3) pattern ("data/*.npz"), matches sorted.
// Each entry is read with the one loader (engine/load/samples.h), one at a time:
// an .npz may hold one sample (keys INPUT) or several (keys SAMPLE/INPUT).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "onnx/inspect.h"

namespace parity {

// The entries of `source`. Errors (kInvalidArgument, naming SRC): nothing
// matches, or a directory holds no sample file or folder; kNotFound when a
// path without glob characters does not exist.
// A folder's entries follow core/own_tree.h: a symlink among them is refused
// unless `allow_symlinks`, and an entry named like a sample file that is
// not a regular file (a FIFO, a device) is refused, not skipped. parity's own
// output folders (a report, a run's outputs: their marker .parity-output)
// are no entries.
inline constexpr std::string_view kDatasetSymlinkHint = " (--allow-symlinks follows them)";
Result<std::vector<std::filesystem::path>> ListDatasetEntries(const std::string& source, bool allow_symlinks = false);

// A sample's id: the entry's stem (a folder's name), or "STEM/SAMPLE" when
// the entry holds several samples.
std::string DatasetSampleId(const std::filesystem::path& entry, const std::string& sample, size_t samples_in_entry);

// Reads entry `path` and checks its samples against the model's inputs
// (LoadSamplesFor's errors).
Result<std::vector<Sample>> LoadDatasetEntry(const ModelInfo& info, const std::filesystem::path& path,
                                             const std::string& model_label, bool allow_symlinks = false);

// The stored reference outputs of entry `entry` (check --reference-outputs
// DIR, docs/dataset.md): DIR/STEM.npz, STEM the entry's stem as in its ids,
// with keys OUTPUT (one sample) or SAMPLE/OUTPUT (the entry's sample names).
// Errors: the file is missing or unreadable (naming it).
Result<std::vector<Sample>> LoadDatasetReference(const std::filesystem::path& dir, const std::filesystem::path& entry,
                                                 bool allow_symlinks = false);

// The reference outputs of `sample` among `stored`: the one stored sample
// when both the entry and the file hold one, else the one of the same name;
// null when there is none.
const TensorSet* FindDatasetReference(const std::vector<Sample>& stored, const Sample& sample, size_t samples_in_entry);

}  // namespace parity
