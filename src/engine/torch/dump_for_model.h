// A PyTorch dump read for one model file, and the check that it was made
// from that model: the steps `align` and `locate --reference torch:DIR`
// share (issue 55: not repeated in each command).
#pragma once

#include <filesystem>
#include <string>

#include "core/run_config.h"
#include "core/status.h"
#include "engine/load/pick_sample.h"
#include "engine/torch/torch_compare.h"
#include "engine/torch/torch_dump.h"
#include "onnx/model.h"

namespace parity {

// LoadFittingDump (dump_check.h) of `dir` against `model`, read from
// `model_path` (its label too), the provenance checked by hashing that file;
// the provenance note, if any, goes to `note` as "note: ...".
Result<TorchDump> LoadDumpForModel(const std::filesystem::path& dir, const Model& model, const std::string& model_path,
                                   bool allow_symlinks, const NoteSink& note);

// CheckSomeLayerAligned (dump_check.h) on a comparison's aligned layers: a
// dump none of whose layers aligns was made from another model.
Status CheckSomeLayerAligned(const TorchDump& dump, const TorchComparison& comparison, const std::string& model_label);

// `parity align`: CompareWithTorch, refused (kInvalidArgument) when no layer aligns.
Result<TorchComparison> AlignWithDump(const Model& model, const TorchDump& dump, const RunConfig& config,
                                      const TorchCompareOptions& options);

}  // namespace parity
