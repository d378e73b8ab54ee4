// `parity check MODEL --dataset SRC` (docs/dataset.md): every sample of a
// dataset through the reference and the target, judged by the one judge,
// streamed: a sample is read, run, reduced to its row and dropped. Then the
// worst samples and the top-1 flips are located and where they first diverge
// is ranked.
//
// Memory: the models' two sessions, one entry's samples at a time, and per
// sample one DatasetRow (its id, sample name and 56 bytes per output), so it
// grows with the sample count only by the rows (about 100 bytes + 56 per
// output per sample: 2,000 samples of one output are ~0.3 MB), plus the
// source's list of paths.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "engine/dataset/dataset_eval.h"
#include "engine/dataset/dataset_reference.h"
#include "engine/dataset/dataset_result.h"
#include "engine/load/reference.h"
#include "engine/load/reference_model.h"
#include "onnx/inspect.h"

namespace parity {

inline constexpr size_t kDatasetLocateWorst = 3;     // --dataset-locate's default
inline constexpr size_t kDatasetLocateFlipCap = 20;  // flipped samples located at most

// Rows computed elsewhere (the Ray engine): gets the entries, the reference
// (what its workers are told of it: DatasetReference::WorkerArgs) and the
// outputs, appends to report.rows (entry order) and report.bad / report.skipped.
using DatasetRowSource = std::function<Status(const std::vector<std::filesystem::path>& entries,
                                              const DatasetReference& reference, DatasetReport& report)>;

struct DatasetOptions {
  std::string model_path;
  Reference reference;  // kConfig or kModel
  RunConfig target;
  TolerancePolicy policy;
  std::string source;     // SRC (dataset_source.h)
  // --reference-outputs DIR: stored reference outputs per entry (a torch.nn.Module's,
  // written by parity.check) instead of running `reference` (which must be kConfig).
  std::filesystem::path reference_outputs;
  bool skip_bad = false;  // --on-bad-sample skip; default: the first bad sample ends the run
  bool allow_symlinks = false;  // --allow-symlinks: follow symlinks inside the dataset (dataset_source.h)
  size_t locate_worst = kDatasetLocateWorst;
  size_t locate_flip_cap = kDatasetLocateFlipCap;
  DatasetRowSource rows;  // empty: the local engine
  std::string engine = "local";
  // After each sample: (samples judged, entries done, entries in all).
  std::function<void(int64_t, size_t, size_t)> progress;
};

// Errors: the model, reference model or source cannot be read; no entry
// (dataset_source.h); with !skip_bad, the first bad sample
// (kInvalidArgument "sample 'ID': ..."); every sample bad; a runtime failure.
Result<DatasetReport> RunDataset(const DatasetOptions& options);

// One entry through an evaluator: its rows, or its bad sample (an entry
// that cannot be read or checked is one bad sample named by the entry; a
// sample ORT refuses is one bad sample). Used by the local engine and by
// `parity dataset-worker`.
struct DatasetEntryResult {
  std::vector<DatasetRow> rows;
  std::vector<DatasetBadSample> bad;
  std::optional<Error> fatal;  // a runtime failure (out of memory): no verdict
};
DatasetEntryResult EvaluateDatasetEntry(const DatasetEvaluator& evaluator, const ModelInfo& info,
                                        const std::filesystem::path& entry, size_t index, const std::string& label);

// The located samples' first divergences (DatasetReference::Locate) ranked
// (dataset_locate.cc): fills
// report.located and report.ranking. Sessions of the stream are released.
void LocateDatasetSamples(const DatasetOptions& options, const Model& model, const ReferenceModel& reference_model,
                          const DatasetReference& reference, const ModelInfo& info, const std::vector<std::filesystem::path>& entries,
                          DatasetReport& report);

}  // namespace parity
