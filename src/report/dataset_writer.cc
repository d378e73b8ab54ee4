#include "report/dataset_report.h"
#include "report/report_writer.h"

namespace parity {

Status WriteDatasetReport(const DatasetReport& report, const std::filesystem::path& dir,
                          const ModelExplorerLinks* model_explorer) {
  // Rendered whole before the first byte is written; staged like check's report.
  return WriteReportFiles(dir, ReportJsonText(DatasetReportToJson(report)),
                          DatasetReportToHtml(report, model_explorer), DatasetReportToJUnit(report));
}

}  // namespace parity
