#include "report/report_writer.h"

#include <string>

#include "core/atomic_file.h"
#include "core/json_out.h"
#include "core/output_dir.h"
#include "report/json/check_json.h"
#include "report/html/html.h"
#include "report/json/json_helpers.h"
#include "report/junit/junit.h"

namespace parity {

Status CheckReportDir(const std::filesystem::path& dir) {
  return WithContext(CheckReplaceableOutputDir(dir, kReportKind, kReportFiles), "--report");
}

Status WriteReportFiles(const std::filesystem::path& dir, std::string json, std::string html, std::string junit) {
  const std::pair<const char*, std::string> files[] = {
      {kReportJsonName, std::move(json)}, {kReportHtmlName, std::move(html)}, {kReportJUnitName, std::move(junit)}};
  // Only a new, empty or earlier report folder is replaced (docs/security.md),
  // and only whole: the files go to a staging folder beside it first.
  auto staged = StageOutputDir(dir, kReportKind, kReportFiles);
  if (!staged) return std::unexpected(staged.error().With("--report"));
  for (const auto& [name, text] : files)
    if (auto s = WriteFileAtomic(staged->path() / name, text, Sync::kByFolder); !s)
      return std::unexpected(s.error().With("writing the report " + (dir / name).string()));
  if (auto s = staged->Commit(/*replace=*/true); !s) return std::unexpected(s.error().With("writing the report"));
  return {};
}

Status WriteCheckReport(const CheckReport& report, const std::filesystem::path& dir) {
  // Everything is rendered before the first byte is written.
  return WriteReportFiles(dir, ReportJsonText(CheckReportToJson(report)), CheckReportToHtml(report),
                          CheckReportToJUnit(report));
}

std::string ReportJsonText(nlohmann::json j) {
  ShortenLongNamesIn(j);
  return ToJsonText(j, 2) + "\n";
}

Status WriteReportJson(const std::filesystem::path& path, nlohmann::json j) {
  const std::string text = ReportJsonText(std::move(j));
  return WithContext(WriteFileAtomic(path, std::string_view(text)), path.string());
}

}  // namespace parity
