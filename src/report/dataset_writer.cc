#include "core/atomic_file.h"
#include "core/json_out.h"
#include "core/output_dir.h"
#include "report/dataset_report.h"
#include "report/report_writer.h"

namespace parity {

Status WriteDatasetReport(const DatasetReport& report, const std::filesystem::path& dir) {
  // Rendered whole before the first byte is written; staged like check's report.
  const std::pair<const char*, std::string> files[] = {
      {kReportJsonName, ToJsonText(DatasetReportToJson(report), 2) + "\n"},
      {kReportHtmlName, DatasetReportToHtml(report)},
      {kReportJUnitName, DatasetReportToJUnit(report)},
  };
  auto staged = StageOutputDir(dir, kReportKind, kReportFiles);
  if (!staged) return std::unexpected(staged.error().With("--report"));
  for (const auto& [name, text] : files)
    if (auto s = WriteFileAtomic(staged->path() / name, text); !s)
      return std::unexpected(s.error().With("writing the report " + (dir / name).string()));
  if (auto s = staged->Commit(/*replace=*/true); !s) return std::unexpected(s.error().With("writing the report"));
  return {};
}

}  // namespace parity
