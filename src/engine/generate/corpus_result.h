// The result of a corpus check (corpus_check.h) over every prompt, and its
// summary: the distributions of KL(PyTorch || ORT) over all steps and over
// prompts (median, p95, max), the share of prompts whose top token agrees at
// every step, per step index the KL and the agreement over prompts, and the
// worst prompts. Both engines (local, Ray) fill `prompts` with the same rows
// and SummarizeCorpus computes the rest, so the two give the same numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/generate/corpus_check.h"

namespace parity {

// The KL tolerance (a prompt fails when a step's KL(PyTorch || ORT) is above
// it), calibrated when the record has PyTorch's float64 copy (kl_fp64):
// kCorpusCalibrationFactor times the largest KL between the copy and the
// float32 model over the corpus (what float32 rounding alone moves; 1000x in
// KL is about 30x in the logits' error, KL being quadratic in it), at least
// kCorpusKlFloor. On the Llama step of docs/generation.md the calibration's
// largest KL was 1.6e-15 and the healthy export's 2.4e-15; an fp16 copy
// measured 1e-9 up. Without calibration: kDefaultCorpusKlTolerance.
inline constexpr double kCorpusCalibrationFactor = 1000;
inline constexpr double kCorpusKlFloor = 1e-12;
inline constexpr double kDefaultCorpusKlTolerance = 1e-6;
// At most this many worst prompts are listed.
inline constexpr size_t kMaxWorstCorpusPrompts = 10;

struct Quantiles {
  double median = 0, p95 = 0, max = 0;
};

// Linear interpolation between order statistics (NumPy's default); all 0 for none.
Quantiles QuantilesOf(std::vector<double> values);

// `check PACKAGE_DIR` (an ORT GenAI package, genai_check.h): what the
// runtime's own loop ran under.
struct GenAiRun {
  std::string package, config_path;  // the folder and its genai_config.json
  std::string search_json;           // genai_config.json's "search" object, as JSON text
  std::string session_options_json;  // its model.decoder.session_options (ORT's session: threads, providers)
  std::string genai_version, ort_version;
  bool greedy = true;  // do_sample false, one beam: the free run is judged against PyTorch's tokens
};

struct CorpusResult {
  std::string model_path, corpus_dir, torch_model, engine = "local", config;
  int64_t steps = 0, top_k = 0, vocab = 0, bytes_per_step = 0;
  double kl_tolerance = kDefaultCorpusKlTolerance;
  std::string kl_tolerance_origin = "default";  // "calibrated", "--kl-tolerance" or "default"
  double calibration_max_kl = -1;               // the largest kl_fp64; < 0: not calibrated
  std::vector<CorpusPrompt> prompts;  // by index
  std::vector<std::string> texts;     // per prompt ("" when the corpus has none)
  std::optional<GenAiRun> genai;      // an ORT GenAI package's run

  // Filled by SummarizeCorpus.
  Quantiles kl_steps, kl_prompt_max, rank;
  double max_tail_bound = 0, max_tail_mass = 0;
  int64_t prompts_agreeing = 0, steps_agreeing = 0, steps_judged = 0, prompts_failing = 0, prompts_errored = 0;
  int64_t prompts_free_departing = 0;      // GenAI: the free run departs before teacher forcing does
  std::vector<Quantiles> kl_by_step;       // per step index, over prompts
  std::vector<double> agreement_by_step;   // share of prompts whose top token agrees at that step
  std::vector<size_t> worst;               // indices into prompts: failing first, then by KL
  bool pass = false;
  double ort_ms = 0;                       // ORT's calls, all prompts
};

// Whether one prompt passes: no ORT error, its top token agrees at every
// step and no step's KL is above the tolerance.
bool CorpusPromptPasses(const CorpusPrompt& p, double kl_tolerance);

// Sets kl_tolerance and its origin: `given` (>= 0: --kl-tolerance), else
// calibrated from the record, else the default.
void ResolveCorpusTolerance(CorpusResult& r, const CorpusRecord& record, double given);

// Fills the summary fields from `prompts`.
void SummarizeCorpus(CorpusResult& r);

// One prompt's row as one line (the Ray workers' answer, corpus-worker):
// JSON, doubles in their shortest exact form, inf as "inf".
std::string FormatCorpusRow(const CorpusPrompt& p);
// kInvalidArgument for a line that is not such a row.
Result<CorpusPrompt> ParseCorpusRow(std::string_view line);

}  // namespace parity
