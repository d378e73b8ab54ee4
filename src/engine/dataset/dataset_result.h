// The result of `parity check MODEL --dataset SRC` (docs/dataset.md): the
// per-sample metric rows, their distribution per output, the worst samples,
// top-1 agreement and the flipped samples, and where the located samples
// first diverge, ranked. Plain data; src/report/dataset_*.cc writes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare_sets.h"
#include "compare/tolerance.h"
#include "core/run_config.h"
#include "engine/locate/locate_result.h"
#include "engine/run/environment.h"

namespace parity {

// One output of one sample, judged by the one judge (compare/judge.h).
struct DatasetCell {
  double max_abs = 0;
  double cosine = 1;
  double snr_db = 0;
  double mismatch_share = 0;  // mismatches / elements under the resolved tolerance
  double score = 0;           // ErrorScore: 1 is the edge of the band
  bool passed = true;
  int64_t top1_rows = 0;   // rows with a class axis (0: not classifier-like)
  int64_t top1_agree = 0;  // rows whose top-1 class is the same on both sides
  bool flipped() const { return top1_agree < top1_rows; }
};

// One sample's row: its id and one cell per output (DatasetReport::outputs).
// `entry` / `sample` say where it was read (the source's file index and the
// sample's name in that file), so it can be read again to be located.
struct DatasetRow {
  std::string id;
  size_t entry = 0;
  std::string sample;
  std::vector<DatasetCell> cells;
};

// Linear-interpolated quantiles (NumPy's default) over the samples.
struct DatasetQuantiles {
  double min = 0, p1 = 0, p10 = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

// How the samples spread on one output.
struct DatasetOutputSummary {
  std::string name;
  int64_t failed = 0;  // samples out of tolerance
  DatasetQuantiles max_abs, cosine, snr_db, mismatch_share, score;
  // log10(max_abs) histogram: bin 0 counts exact zeros, then decades
  // [1e-9, 1e-8), ..., [1e2, 1e3), the last one everything from 1e3 (and NaN/inf).
  std::vector<int64_t> histogram;
  // Classifier-like outputs (engine/quant/top1.h): rows counted and agreeing.
  bool classifier = false;
  int64_t top1_rows = 0, top1_agree = 0;
  std::vector<std::string> flipped;  // ids of samples with a flipped row, in stream order
  double top1_agreement() const {
    return top1_rows > 0 ? static_cast<double>(top1_agree) / static_cast<double>(top1_rows) : 1.0;
  }
};

// The decade edges of DatasetOutputSummary::histogram: 1e-9 .. 1e3.
inline constexpr int kDatasetHistogramFirstDecade = -9;
inline constexpr int kDatasetHistogramBins = 14;  // zero, 12 decades, >= 1e3

// A sample among the worst, by its highest score over the outputs.
struct DatasetWorst {
  std::string id;
  std::string output;  // the output of that score
  double score = 0, max_abs = 0, cosine = 1, snr_db = 0;
};

// One located sample: why it was chosen and where it first diverges.
struct DatasetLocated {
  std::string id;
  bool worst = false;    // among the worst k
  bool flipped = false;  // a top-1 flip
  std::optional<FirstDivergence> first;  // absent: no tensor departs, or locate failed
  // With a reference model: the node where the two models first differ with
  // optimizations off (the original node inside the fused one).
  std::string node;
  std::string node_op;
  // The PyTorch module of that node (`node`, else the first divergence's
  // producer), as a torch export recorded it (engine/torch/torch_scope.h:
  // node metadata or TorchScript node names); "" when none is recorded.
  std::string module;
  std::string error;  // why locate could not run
};

// A fused node (and, with a reference model, the original node) where
// located samples first diverge, with how many.
struct DatasetRankEntry {
  std::string fused_node;
  std::string op_type;
  std::string node;  // the original node, when known
  std::vector<std::string> covers;
  int64_t samples = 0;  // located samples diverging here first
  int64_t flips = 0;    // of them, top-1 flips
  std::vector<std::string> ids;
};

// A PyTorch module where located samples first diverge (their `module`).
struct DatasetModuleRank {
  std::string module;
  int64_t samples = 0;
  int64_t flips = 0;
  std::vector<std::string> ids;
};

struct DatasetBadSample {
  std::string id;
  std::string error;
};

struct DatasetReport {
  std::string tool_version;
  Environment env;
  std::string engine = "local";  // "local" or "ray"
  std::string model;
  std::string reference;  // "onnx:disable" or "model:PATH under disable"
  RunConfig target;
  TolerancePolicy tolerance;
  std::string source;
  int64_t count = 0;    // samples judged
  int64_t skipped = 0;  // bad samples skipped (--on-bad-sample skip)
  std::vector<DatasetBadSample> bad;  // the first kMaxListedBadSamples of them
  double seconds = 0;                 // the streaming pass
  std::vector<std::string> outputs;
  std::vector<DatasetOutputSummary> summaries;  // one per output
  std::vector<DatasetWorst> worst;              // highest score first
  std::vector<DatasetLocated> located;
  size_t locate_worst = 0;    // k
  size_t locate_flip_cap = 0; // the most flipped samples located
  int64_t flips_total = 0;    // samples with any flipped output
  std::vector<DatasetRankEntry> ranking;  // most samples first
  std::vector<DatasetModuleRank> module_ranking;  // the same by PyTorch module; empty without provenance
  // Ray engine: samples (and entries) run again after an actor died; 0 locally.
  int64_t retried = 0;
  int64_t retried_entries = 0;
  std::vector<DatasetRow> rows;           // every judged sample, stream order
  std::vector<std::string> notes;
  Verdict overall = Verdict::kPass;
};

inline constexpr size_t kMaxListedBadSamples = 100;
inline constexpr size_t kDatasetWorstListed = 10;

}  // namespace parity
