// The result of a corpus check (corpus_check.h) over every prompt, and its
// summary: the distributions of KL(PyTorch || ORT) over all steps and over
// prompts (median, p95, max), the share of prompts whose top token agrees at
// every step, per step index the KL and the agreement over prompts, and the
// worst prompts. Both engines (local, Ray) fill `prompts` with the same rows
// and SummarizeCorpus computes the rest, so the two give the same numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/generate/corpus_check.h"

namespace parity {

// The default KL tolerance: a prompt fails when a step's KL(PyTorch || ORT)
// is above it. Healthy fp32 exports measured up to about 1e-9 nats on the
// corpus of docs/generation.md; a x1.01 weight, an fp16 copy and an int8
// copy from about 1e-6 up.
inline constexpr double kDefaultCorpusKlTolerance = 1e-6;
// At most this many worst prompts are listed.
inline constexpr size_t kMaxWorstCorpusPrompts = 10;

struct Quantiles {
  double median = 0, p95 = 0, max = 0;
};

// Linear interpolation between order statistics (NumPy's default); all 0 for none.
Quantiles QuantilesOf(std::vector<double> values);

struct CorpusResult {
  std::string model_path, corpus_dir, torch_model, engine = "local", config;
  int64_t steps = 0, top_k = 0, vocab = 0, bytes_per_step = 0;
  double kl_tolerance = kDefaultCorpusKlTolerance;
  std::vector<CorpusPrompt> prompts;  // by index
  std::vector<std::string> texts;     // per prompt ("" when the corpus has none)

  // Filled by SummarizeCorpus.
  Quantiles kl_steps, kl_prompt_max, rank;
  double max_tail_bound = 0;
  int64_t prompts_agreeing = 0, steps_agreeing = 0, steps_judged = 0, prompts_failing = 0, prompts_errored = 0;
  std::vector<Quantiles> kl_by_step;       // per step index, over prompts
  std::vector<double> agreement_by_step;   // share of prompts whose top token agrees at that step
  std::vector<size_t> worst;               // indices into prompts: failing first, then by KL
  bool pass = false;
  double ort_ms = 0;                       // ORT's calls, all prompts
};

// Whether one prompt passes: no ORT error, its top token agrees at every
// step and no step's KL is above the tolerance.
bool CorpusPromptPasses(const CorpusPrompt& p, double kl_tolerance);

// Fills the summary fields from `prompts`.
void SummarizeCorpus(CorpusResult& r);

// One prompt's row as one line (the Ray workers' answer, corpus-worker):
// JSON, doubles in their shortest exact form, inf as "inf".
std::string FormatCorpusRow(const CorpusPrompt& p);
// kInvalidArgument for a line that is not such a row.
Result<CorpusPrompt> ParseCorpusRow(std::string_view line);

}  // namespace parity
