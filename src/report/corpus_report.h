// The writers of a corpus check's report (`check --corpus`, docs/generation.md
// "A prompt corpus"; schema: docs/report.schema.json's $defs.corpus_report):
// JSON, a self-contained HTML page (uPlot charts of KL and agreement per step
// and per prompt, the worst prompts with their text), JUnit (one test case
// per prompt) and the console summary; and the report folder, written whole.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "engine/generate/corpus_result.h"

namespace parity {

inline constexpr std::string_view kCorpusReportSchema = "parity.corpus_check/1";
// Above this many prompts report.json leaves out the per-step rows of each
// prompt (the summary is computed from all of them).
inline constexpr size_t kMaxCorpusStepRowsInJson = 100'000;

nlohmann::json CorpusResultToJson(const CorpusResult& r);
std::string CorpusResultToHtml(const CorpusResult& r);
std::string CorpusResultToJUnit(const CorpusResult& r);
// Verdict, KL quantiles, agreement, the worst prompts.
std::string FormatCorpusSummary(const CorpusResult& r);
Status WriteCorpusReport(const CorpusResult& r, const std::filesystem::path& dir);

}  // namespace parity
