// The writers of `check --dataset`'s report (docs/dataset.md): JSON
// (parity.dataset/1, docs/dataset.schema.json), a self-contained HTML page
// (the per-sample error histogram, top-1 agreement, the ranking), JUnit (one
// test case per output) and the console summary; and the report folder,
// written whole (the staged writer of report_writer.h).
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "engine/check/check_result.h"
#include "engine/dataset/dataset_result.h"

namespace parity {

// Above this many samples report.json leaves out the per-sample `samples`
// rows (with a note); every summary is still computed from all of them.
inline constexpr size_t kMaxDatasetRowsInJson = 100'000;

nlohmann::json DatasetReportToJson(const DatasetReport& report);
// `model_explorer`: --model-explorer's files, linked from the page (null: none).
std::string DatasetReportToHtml(const DatasetReport& report, const ModelExplorerLinks* model_explorer = nullptr);
std::string DatasetReportToJUnit(const DatasetReport& report);

// "14 of 17 located flips first diverge at Conv '/features/3/Conv' (fused node 'x')";
// empty without a ranking.
// "14 of 17 located flips first diverge in module features.4" from the
// module ranking; "" when no located node records a PyTorch module.
std::string DatasetModuleHeadline(const DatasetReport& report);
std::string DatasetHeadline(const DatasetReport& report);

// The console summary: verdict, per output quantiles and agreement, the worst
// samples, the ranking.
std::string FormatDatasetSummary(const DatasetReport& report);

// report.json, report.html and junit.xml into `dir`, staged and put in place
// whole (CheckReportDir's rules: a new, empty or earlier report folder).
Status WriteDatasetReport(const DatasetReport& report, const std::filesystem::path& dir,
                          const ModelExplorerLinks* model_explorer = nullptr);

}  // namespace parity
