// A prompt corpus recorded from PyTorch (python -m parity.torch corpus,
// python/parity/torch/corpus.py; docs/generation.md "A prompt corpus"):
// per prompt its token ids and, per step of PyTorch's greedy decode, the
// token PyTorch chose, its k largest logits with their ids and the
// log-sum-exp of the whole row. Memory: prompts x steps x (8k + 16) bytes
// plus the prompts' ids, never the vocabulary.
//
// Thread-safe once loaded (read only).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/generate/generation_record.h"

namespace parity {

inline constexpr std::string_view kCorpusSchema = "parity.corpus/1";

// One step-model input the corpus feeds: its dtype and, for a cache, the
// empty past every prompt starts from (a 0 on its sequence axis).
struct CorpusInput {
  std::string name;
  DType dtype = DType::kFloat32;
  std::optional<Shape> empty_past;
};

struct CorpusRecord {
  std::filesystem::path dir;
  std::string model;  // the factory it was recorded from
  int64_t prompts = 0, steps = 0, top_k = 0, vocab = 0;
  std::string token_input, mask_input, positions_input, logits_output;
  std::vector<KvPair> kv;
  std::vector<CorpusInput> inputs;
  std::vector<std::optional<std::string>> texts;  // per prompt
  std::vector<int64_t> offsets;                   // [prompts + 1] into ids
  std::vector<int64_t> ids;
  Tensor tokens;       // int64 [P, N]
  Tensor topk_ids;     // int32 [P, N, k]
  Tensor topk_logits;  // float32 [P, N, k], descending
  Tensor lse;          // float64 [P, N]
  // KL(float64 copy || PyTorch) per step [P, N]: what float32 rounding alone
  // moves (the calibration); empty when recorded with --no-fp64.
  Tensor kl_fp64;

  std::span<const int64_t> PromptIds(int64_t p) const {
    return std::span<const int64_t>(ids).subspan(offsets[p], offsets[p + 1] - offsets[p]);
  }
  int64_t Token(int64_t p, int64_t s) const { return tokens.view<int64_t>()[p * steps + s]; }
  std::span<const int32_t> TopIds(int64_t p, int64_t s) const {
    return topk_ids.view<int32_t>().subspan((p * steps + s) * top_k, top_k);
  }
  std::span<const float> TopLogits(int64_t p, int64_t s) const {
    return topk_logits.view<float>().subspan((p * steps + s) * top_k, top_k);
  }
  double Lse(int64_t p, int64_t s) const { return lse.view<double>()[p * steps + s]; }
  bool Calibrated() const { return kl_fp64.size() > 0; }
  // Bytes of the per-step store (the top-k, the token and the lse).
  int64_t BytesPerStep() const { return top_k * 8 + 16; }
};

// Reads DIR/corpus.json and its arrays, each checked before use: kInvalidArgument,
// one line naming the file and the field ("corpus.json: top_k: 0 is not in
// [1, 65536]", "topk_ids.npy: shape [3, 4] where [24, 16, 64] is due", a
// token id not below the vocabulary, offsets that do not rise).
Result<CorpusRecord> LoadCorpusRecord(const std::filesystem::path& dir);

// The step model's inputs for prompt p: its ids [1, L], a mask of ones, the
// positions 0..L-1 and every cache empty.
TensorSet CorpusPromptInputs(const CorpusRecord& r, int64_t p);

}  // namespace parity
