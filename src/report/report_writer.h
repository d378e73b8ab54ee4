// Writes the check report's files into a directory: report.json (schema
// parity.check/1), report.html (self-contained) and junit.xml.
#pragma once

#include <filesystem>
#include <string_view>

#include "core/status.h"
#include "engine/check/check_result.h"

namespace parity {

inline constexpr const char* kReportJsonName = "report.json";
inline constexpr const char* kReportHtmlName = "report.html";
inline constexpr const char* kReportJUnitName = "junit.xml";
// The output-folder marker's kind (core/output_dir.h).
inline constexpr std::string_view kReportKind = "parity.report";

// Renders all three files in memory, then writes them through AtomicFile.
// Creates `dir` (and its parents) when missing; refuses (kInvalidArgument) a
// folder holding files parity did not write (core/output_dir.h: new, empty or
// an earlier report only) and marks it as a report. Either all three files are
// written whole, or the call fails and leaves none of them (a file it had
// already committed is removed again; an earlier report's file that it had
// replaced is then gone too). Errors: kNotFound / kInvalidArgument naming the
// path that could not be written. Not safe to call concurrently on one dir.
Status WriteCheckReport(const CheckReport& report, const std::filesystem::path& dir);

}  // namespace parity
