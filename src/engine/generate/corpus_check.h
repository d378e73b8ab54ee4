// The teacher-forced corpus check (issue 52, docs/generation.md "A prompt
// corpus"): every prompt of a corpus record (corpus_record.h) is decoded on
// ONNX Runtime with PyTorch's tokens fed back (teacher forcing: both sides
// see the same inputs at every step), and each step's last-position logits
// are compared with PyTorch's top-k and log-sum-exp.
//
// Per step: KL(PyTorch || ORT) over the vocabulary, computed from PyTorch's
// top-k set S and ORT's whole row: the terms of S plus the tail (every token
// outside S) as one bucket. That value is a lower bound of the true KL (the
// log-sum inequality: merging the tail's tokens can only lower it) and the
// true KL is at most it plus `kl_tail_bound` = p_tail * max(0, log(p_k /
// p_tail) + log(q_tail / q_min)), where p_tail and q_tail are the tail's mass
// under PyTorch and ORT, p_k PyTorch's smallest kept probability (every tail
// token's is at most it) and q_min ORT's smallest tail probability (the
// tail's KL is at most the log of the largest ratio of its normalized
// probabilities). With k = vocabulary both are exact and the bound 0.
//
// Thread-compatible: one prompt at a time per session.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "engine/generate/corpus_record.h"
#include "engine/runner/step_session.h"
#include "ort/session.h"

namespace parity {

struct CorpusStep {
  double kl = 0;             // KL(PyTorch || ORT), the top-k + tail estimate (a lower bound)
  double kl_tail_bound = 0;  // the true KL is at most kl + this
  double tail_mass = 0;      // PyTorch's probability outside its top k
  bool agree = true;         // ORT's top token is PyTorch's
  int64_t rank = 1;          // PyTorch's token's rank in ORT's row (1: ORT's top)
  int64_t ort_token = 0;     // ORT's top token (the first on ties)
};

struct CorpusPrompt {
  int64_t index = 0;
  int64_t prompt_length = 0;
  std::vector<CorpusStep> steps;
  std::string error;  // ORT failed on this prompt (its message, with the step); steps then holds those before
  double ort_ms = 0;  // ORT's calls, all steps (not compared across engines)
  // An ORT GenAI package's own free-running decode (genai_check.h): how many
  // tokens its search gave (-1: none ran) and the first step whose token is
  // not PyTorch's.
  int64_t free_steps = -1;
  std::optional<int64_t> free_divergent;

  // The first step whose top token differs: where a free-running greedy
  // decode on ORT would leave PyTorch's (until then both are fed the same tokens).
  std::optional<int64_t> FirstDivergent() const;
  bool AgreesThroughout() const { return error.empty() && !FirstDivergent(); }
  // The free run left PyTorch's tokens where teacher forcing still agreed:
  // the runtime's own loop departs from what its logits say.
  bool FreeRunDepartsEarlier() const {
    return free_divergent && (!FirstDivergent() || *free_divergent < *FirstDivergent());
  }
  double MaxKl() const;
  double MeanKl() const;
};

// Step s of prompt p: ORT's last-position logits `ort` (the vocabulary's
// length) against the record. Exposed for tests.
CorpusStep CompareCorpusStep(const CorpusRecord& r, int64_t p, int64_t s, std::span<const float> ort);

// Whether the session fits the record (its inputs and outputs by name);
// kInvalidArgument naming what is missing.
Status CorpusFitsModel(const CorpusRecord& r, const ort::Session& session, const std::string& model_path);

// Decodes prompt p on `session`, teacher-forced. An ORT failure is the
// prompt's `error`; a logits row whose length is not the record's vocabulary
// is kInvalidArgument (the record is not this model's).
Result<CorpusPrompt> RunCorpusPrompt(const ort::Session& session, const CorpusRecord& r, int64_t p);

// The model's session for a whole corpus (one per process or Ray actor):
// made once, checked against the record (CorpusFitsModel), then every prompt
// runs on it. The decode loop feeds ORT's own output buffers back as the
// next step's pasts, which is why it holds a step session (the fresh form of
// engine/runner/step_session.h, as the generation loop does) rather than
// asking a Runner for values.
class CorpusSession {
 public:
  static Result<CorpusSession> Open(const std::string& model_path, const RunConfig& config, const CorpusRecord& r);
  Result<CorpusPrompt> Run(int64_t p) const { return RunCorpusPrompt(session(), *record_, p); }
  const ort::Session& session() const { return *step_.plain(); }

 private:
  CorpusSession(StepSession s, const CorpusRecord* r) : step_(std::move(s)), record_(r) {}
  StepSession step_;  // the fresh form: each step's presents fed back as the next pasts
  const CorpusRecord* record_;
};

// Prompts `indices` on one session, in order; `done(i, n)` after each.
Result<std::vector<CorpusPrompt>> RunCorpusPrompts(const ort::Session& session, const CorpusRecord& r,
                                                   const std::vector<int64_t>& indices,
                                                   const std::function<void(size_t, size_t)>& done = {});

}  // namespace parity
