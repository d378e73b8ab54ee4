// Writes the check report's files into a directory: report.json (schema
// parity.check/1), report.html (self-contained) and junit.xml.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "engine/check/check_result.h"

namespace parity {

inline constexpr const char* kReportJsonName = "report.json";
inline constexpr const char* kReportHtmlName = "report.html";
inline constexpr const char* kReportJUnitName = "junit.xml";
// The output-folder marker's kind (core/output_dir.h).
inline constexpr std::string_view kReportKind = "parity.report";

// The files of a report folder besides the marker, for
// CheckReplaceableOutputDir (core/output_dir.h).
inline constexpr std::string_view kReportFiles[] = {kReportJsonName, kReportHtmlName, kReportJUnitName};

// Whether `dir` may receive the report (core/output_dir.h): new, empty, or an
// earlier report holding nothing but its own files. Touches nothing; `check`
// calls it before it runs.
Status CheckReportDir(const std::filesystem::path& dir);

// Renders all three files in memory, then writes them, with the marker, into
// a staging folder beside `dir` and puts it in place whole (core/staged_dir.h):
// a missing or empty `dir` (parents created) or an earlier report that
// CheckReportDir accepts is replaced; an error or an interrupt before that
// leaves `dir` exactly as it was and no staging folder behind. Errors:
// kInvalidArgument naming the folder refused or the path that could not be
// written. Not safe to call concurrently on one dir.
Status WriteCheckReport(const CheckReport& report, const std::filesystem::path& dir);

// The same for any report already rendered (the dataset report's writer).
Status WriteReportFiles(const std::filesystem::path& dir, std::string json, std::string html, std::string junit);

// A report's JSON text (report.json, every command's --json): the long names
// the process remembered shortened (ShortenLongNamesIn, json_helpers.h),
// pretty-printed with a final newline.
std::string ReportJsonText(nlohmann::json j);
// Writes ReportJsonText(j) to `path` whole or not at all (WriteJsonFile's
// contract, core/json_out.h).
Status WriteReportJson(const std::filesystem::path& path, nlohmann::json j);

}  // namespace parity
