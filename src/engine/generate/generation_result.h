// What the generation check found (engine/generate/generation.h): plain
// data, written by report/generation_*.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare_sets.h"

namespace parity {

// One step of the loop: PyTorch's and ORT's, side by side.
struct GenerationStep {
  int64_t step = 0;
  std::string kind;  // "prefill" or "decode"
  std::vector<int64_t> torch_tokens, ort_tokens;
  bool tokens_agree = false;
  // The logits are judged while every earlier token agreed (ORT was fed
  // what PyTorch was); after the first differing step they are not.
  bool judged = false;
  Verdict logits = Verdict::kUnchecked;
  double logits_max_abs = 0;
  double logits_band = 0;   // atol + rtol * max|ref|: the error the tolerance allows
  double logits_score = 0;  // max_abs / band (judge.h)
  std::string logits_why;   // the tolerance's rule, or why it failed
  // The presents against PyTorch's (the worst one), when recorded whole.
  Verdict cache = Verdict::kUnchecked;
  std::string cache_worst;  // its name
  double cache_max_abs = 0;
  double cache_score = 0;
  // Each present starts with the past fed to it (bitwise).
  Verdict starts_with_past = Verdict::kUnchecked;
  double ms = 0;  // ORT's call
};

// A cache check of the whole loop ("present_starts_with_past",
// "prefill_equals_stepwise", "encoder.<output>").
struct GenerationCheck {
  std::string id;
  Verdict status = Verdict::kUnchecked;
  std::string message;
};

struct GenerationResult {
  std::string encoder;  // the encoder model's path; empty: none
  int64_t length = 0, prompt_length = 0, batch = 1;
  std::vector<std::string> kv;  // "present_key_0 -> past_key_0"
  std::vector<GenerationStep> steps;  // at most kMaxListedGenerationSteps (generation.h)
  int64_t steps_not_listed = 0;       // steps of the loop left out of `steps` (the middle ones)
  int64_t tokens_agreeing = 0;                   // steps whose tokens agree
  std::optional<int64_t> first_differing_step;   // the first step whose tokens differ
  std::optional<int64_t> first_failing_logits;   // the first judged step whose logits leave the tolerance
  std::optional<int64_t> first_failing_cache;    // the first judged step whose cache leaves its band or shape
  // The logits error's growth: the last judged step's max_abs over the
  // first's (1: flat); 0 when fewer than two steps were judged.
  double error_growth = 0;
  std::vector<GenerationCheck> checks;
  double loop_ms = 0;  // the ORT decode loop, every step
  Verdict verdict = Verdict::kUnchecked;
};

// One prompt's loop when a check is given one generation dump per prompt
// (--torch D1 --torch D2 ...): a row of the token-agreement distribution.
struct GenerationPrompt {
  std::string dump;  // its folder
  int64_t prompt_length = 0, length = 0, tokens_agreeing = 0;
  std::optional<int64_t> first_differing_step;
  std::optional<int64_t> first_failing_logits;
  std::optional<int64_t> first_failing_cache;  // the first judged step whose cache leaves its band or shape
  double worst_logits_score = 0;  // the worst judged step's max_abs / band
  Verdict verdict = Verdict::kUnchecked;
  std::string error;   // the loop could not run (verdict fail)
  std::string reason;  // why it fails, with its step (empty when it passes)
};

}  // namespace parity
