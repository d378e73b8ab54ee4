#include "report/report_writer.h"

#include <string>
#include <system_error>
#include <vector>

#include "core/atomic_file.h"
#include "core/json_out.h"
#include "core/output_dir.h"
#include "report/check_json.h"
#include "report/html.h"
#include "report/junit.h"

namespace parity {

Status WriteCheckReport(const CheckReport& report, const std::filesystem::path& dir) {
  // Everything is rendered before the first byte is written.
  const std::pair<const char*, std::string> files[] = {
      {kReportJsonName, ToJsonText(CheckReportToJson(report), 2) + "\n"},
      {kReportHtmlName, CheckReportToHtml(report)},
      {kReportJUnitName, CheckReportToJUnit(report)},
  };

  // Only a new, empty or earlier report folder is written (docs/security.md).
  PARITY_RETURN_IF_ERROR(WithContext(ClaimOutputDir(dir, kReportKind), "--report"));
  std::error_code ec;

  std::vector<AtomicFile> pending;
  for (const auto& [name, text] : files) {
    auto file = AtomicFile::Create(dir / name);
    if (!file) return std::unexpected(file.error().With("writing the report"));
    PARITY_RETURN_IF_ERROR(file->Write(text));
    pending.push_back(std::move(*file));
  }
  std::vector<std::filesystem::path> committed;
  for (auto& file : pending) {
    auto status = file.Commit();
    if (!status) {
      for (const auto& path : committed) std::filesystem::remove(path, ec);
      return std::unexpected(status.error().With("writing the report"));
    }
    committed.push_back(file.path());
  }
  return {};
}

}  // namespace parity
