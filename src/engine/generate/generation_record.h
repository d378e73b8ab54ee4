// The `generation` record of a PyTorch dump (python/parity/torch/generate.py,
// docs/generation.md): PyTorch's greedy decode of a step model with a KV
// cache, step by step, which `parity check` replays on ONNX Runtime.
//
// A dump without the record (every dump before it, or one made without
// --generate) loads as before: LoadGenerationRecord returns nullopt.
// Thread-safe (reads files only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/torch/torch_dump.h"

namespace parity {

inline constexpr std::string_view kGenerationSchema = "parity.generation/1";

// Limits of a record (docs/security.md "Limits"): a decode of at most 65,536
// steps, a batch of at most 65,536 rows, 1,048,576 tokens in all (steps x
// batch) and a prompt of at most 1,048,576 tokens. Checked before any step
// is read.
inline constexpr int64_t kMaxGenerationSteps = 65536;
inline constexpr int64_t kMaxGenerationTokens = int64_t{1} << 20;

// One output that feeds one input at the next step.
struct KvPair {
  std::string present;  // "present_key_0"
  std::string past;     // "past_key_0"
};

// One present as PyTorch gave it: its file, or only its shape when the
// dumper kept statistics (a step's presents past --cache-limit).
struct RecordedPresent {
  std::string name;
  std::string file;  // relative to the dump; empty: statistics only
  Shape shape;
};

// One step of PyTorch's loop: step 0 is the prefill (the prompt at once).
struct RecordedStep {
  int64_t step = 0;
  std::vector<int64_t> tokens;  // the chosen token per batch row
  std::string logits;           // the last position's logits [batch, vocab]
  std::string logits_fp64;      // the float64 copy's, fed the same tokens; empty: none
  std::vector<RecordedPresent> presents;
  std::vector<int64_t> origins;  // beam search: the beam each new beam continues
  std::vector<double> draws;     // sampling: the step's draw per row, in [0, 1)
};

// How the record's tokens were chosen (python/parity/torch/search.py):
// "greedy", "beam" (K beams of a prompt of batch 1; each step's tokens and
// origins have K entries) or "sample" (seeded top-k/top-p, the draws recorded).
struct RecordedSearch {
  std::string kind = "greedy";
  int64_t beams = 1;
  int64_t top_k = 0;
  double top_p = 1;
  double temperature = 1;
};

struct GenerationRecord {
  int64_t length = 0;         // tokens generated (steps)
  int64_t batch = 1;
  int64_t prompt_length = 0;  // tokens of the prompt
  std::string token_input;    // the step's ids input
  std::string mask_input;     // empty: none
  std::string positions_input;
  // A merged decoder's branch flag (use_cache_branch): as recorded at the
  // prefill, all ones from step 1 on (and from the prompt's second token
  // when fed one at a time). Empty: none.
  std::string cache_branch_input;
  std::string logits_output;
  std::vector<KvPair> kv;
  RecordedSearch search;
  // Encoder-decoder: step input <- encoder output, and the encoder's own
  // inputs and outputs (empty: no encoder).
  std::vector<std::pair<std::string, std::string>> encoder_feeds;
  TorchFiles encoder_inputs, encoder_outputs;
  std::vector<RecordedStep> steps;
  // The prompt fed one token at a time: its last logits and presents
  // (absent for a one-token prompt).
  std::optional<RecordedStep> stepwise;
};

// Reads DIR/manifest.json's "generation" and checks every field before any
// is used. nullopt when there is none; else kInvalidArgument, one line naming
// the record and the field ("generation.steps[3].tokens: expected an array
// of integers", "generation.length: -1 is not in [1, 65536]") for a
// malformed record: a wrong type, a length, batch or prompt length out of
// range (negative, past int64, past the limits above), steps that are not
// 0, 1, ... length-1 each with `batch` token ids (non-negative), a present's
// shape with a negative dimension, an empty name, or a file leaving the dump.
Result<std::optional<GenerationRecord>> LoadGenerationRecord(const TorchDump& dump);

// One recorded tensor of the dump (a step's logits, a present); errors name the file.
Result<Tensor> LoadRecordedTensor(const TorchDump& dump, const std::string& file);

}  // namespace parity
