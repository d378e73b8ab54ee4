// The `generation` section of a check report (engine/generate/,
// docs/generation.md) in each format: JSON (report.json's "generation",
// docs/report.schema.json), console lines, and the HTML section with its
// inline SVG plot of the per-step logits error against the tolerance.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/generate/generation_result.h"

namespace parity {

nlohmann::json GenerationToJson(const GenerationResult& g);

// "generation: 16/16 tokens agree; logits ..." and a line per failing step
// (at most `max_rows`); plain text (the caller colours the verdict).
std::string FormatGeneration(const GenerationResult& g, size_t max_rows);

// <section id="generation"> with the steps' table and the SVG plot.
std::string GenerationHtmlSection(const GenerationResult& g);

// The plot alone: per step, the logits' max_abs and the band the tolerance
// allows (log scale), the first differing step marked. Exposed for tests.
std::string GenerationSvg(const GenerationResult& g);

// The prompts of a check given one generation dump per prompt
// (CheckReport::generation_prompts): report.json's "generation_prompts",
// console lines (a summary, then the failing prompts, at most `max_rows`),
// and an HTML table; empty input gives [] / "" / "".
nlohmann::json GenerationPromptsToJson(const std::vector<GenerationPrompt>& prompts);
std::string FormatGenerationPrompts(const std::vector<GenerationPrompt>& prompts, size_t max_rows);
std::string GenerationPromptsHtml(const std::vector<GenerationPrompt>& prompts);

}  // namespace parity
