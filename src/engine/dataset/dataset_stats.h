// The distribution of a dataset's per-sample cells (docs/dataset.md): per
// output the quantiles of each metric, the error histogram, top-1 agreement
// and the flipped samples; over all outputs the worst samples. Pure
// functions of the rows, so both engines' reports agree when their rows do.
#pragma once

#include <string>
#include <vector>

#include "engine/dataset/dataset_result.h"

namespace parity {

// NumPy's default (linear) quantile of `sorted` (ascending, not empty) at q in [0, 1].
double Quantile(const std::vector<double>& sorted, double q);

// Fills report.summaries, report.worst (the kDatasetWorstListed highest
// scores, ties in stream order), report.flips_total and report.overall from
// report.rows and report.outputs.
void SummarizeDataset(DatasetReport& report);

// The ids to locate: the `worst` highest-scoring samples (a sample with a
// zero score is never among them), then flipped samples in stream order
// until `flip_cap` flipped samples are chosen (the worst ones that flipped
// count towards the cap).
// Each entry: (index into report.rows, is worst, is flipped).
struct DatasetPick {
  size_t row = 0;
  bool worst = false;
  bool flipped = false;
};
std::vector<DatasetPick> PickSamplesToLocate(const DatasetReport& report, size_t worst, size_t flip_cap);

}  // namespace parity
