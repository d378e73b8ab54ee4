#include "engine/generate/corpus_record.h"

#include <fmt/format.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/json_in.h"
#include "core/npy.h"
#include "core/regular_file.h"

namespace parity {
namespace {

using Json = nlohmann::json;
constexpr int64_t kMaxCorpusJsonBytes = int64_t{256} << 20;


Result<int64_t> Int(const Json& j, const char* key, int64_t lo, int64_t hi) {
  if (!j.contains(key) || !j[key].is_number_integer())
    return InvalidArgument(fmt::format("corpus.json: {}: expected an integer", key));
  const int64_t v = j[key].get<int64_t>();
  if (v < lo || v > hi) return InvalidArgument(fmt::format("corpus.json: {}: {} is not in [{}, {}]", key, v, lo, hi));
  return v;
}

Result<std::string> Str(const Json& j, const char* key, bool optional) {
  if (j.contains(key) && j[key].is_string() && !j[key].get<std::string>().empty()) return j[key].get<std::string>();
  if (optional && (!j.contains(key) || j[key].is_null())) return std::string();
  return InvalidArgument(fmt::format("corpus.json: {}: expected a name", key));
}

Result<Tensor> Array(const CorpusRecord& r, const char* name, DType dtype, const Shape& shape) {
  const std::string file = fmt::format("{}.npy", name);
  PARITY_ASSIGN_OR_RETURN(Tensor t, WithContext(ReadNpy(r.dir / file), file));
  if (t.dtype() != dtype)
    return InvalidArgument(fmt::format("{}: dtype {} where {} is due", file, DTypeName(t.dtype()), DTypeName(dtype)));
  if (!shape.empty() && t.shape() != shape)
    return InvalidArgument(
        fmt::format("{}: shape {} where {} is due", file, ShapeToString(t.shape()), ShapeToString(shape)));
  return t;
}

Status ReadInputs(const Json& j, CorpusRecord& r) {
  if (!j["inputs"].is_array()) return InvalidArgument("corpus.json: inputs: expected an array");
  for (const Json& in : j["inputs"]) {
    if (!in.is_object() || !in.contains("name") || !in["name"].is_string() || !in.contains("dtype") ||
        !in["dtype"].is_string())
      return InvalidArgument("corpus.json: inputs: expected objects with a name and a dtype");
    CorpusInput c{.name = in["name"].get<std::string>()};
    const auto dtype = DTypeFromName(in["dtype"].get<std::string>());
    if (!dtype) return InvalidArgument(fmt::format("corpus.json: inputs.{}: dtype '{}' unknown", c.name, in["dtype"].dump()));
    c.dtype = *dtype;
    if (in.contains("shape") && in["shape"].is_array()) {
      Shape s;
      for (const Json& d : in["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > (int64_t{1} << 20))
          return InvalidArgument(fmt::format("corpus.json: inputs.{}.shape: expected dimensions in [0, 2^20]", c.name));
        s.push_back(d.get<int64_t>());
      }
      c.empty_past = s;
    }
    r.inputs.push_back(std::move(c));
  }
  for (const Json& kv : j.value("kv_map", Json::array())) {
    if (!kv.is_object() || !kv.contains("present") || !kv["present"].is_string() || !kv.contains("past") ||
        !kv["past"].is_string())
      return InvalidArgument("corpus.json: kv_map: expected {\"present\": ..., \"past\": ...} objects");
    r.kv.push_back({kv["present"].get<std::string>(), kv["past"].get<std::string>()});
  }
  if (r.kv.empty()) return InvalidArgument("corpus.json: kv_map: empty (a step model with a KV cache is due)");
  for (const CorpusInput& c : r.inputs) {
    if (c.empty_past) continue;
    if (c.name != r.token_input && c.name != r.mask_input && c.name != r.positions_input)
      return InvalidArgument(fmt::format("corpus.json: inputs.{}: neither the ids, the mask, the positions nor a cache", c.name));
    if (c.dtype != DType::kInt64 && c.dtype != DType::kInt32 && c.dtype != DType::kFloat32 && c.dtype != DType::kBool)
      return InvalidArgument(fmt::format("corpus.json: inputs.{}: dtype {} (int64, int32, float32 or bool due)", c.name,
                             DTypeName(c.dtype)));
  }
  return {};
}

Status ReadHeader(const Json& j, CorpusRecord& r) {
  if (!j.is_object() || !j.contains("schema") || j["schema"] != std::string(kCorpusSchema) || !j.contains("inputs"))
    return InvalidArgument(fmt::format("corpus.json: schema: expected \"{}\"", kCorpusSchema));
  PARITY_ASSIGN_OR_RETURN(r.prompts, Int(j, "prompts", 1, int64_t{1} << 20));
  PARITY_ASSIGN_OR_RETURN(r.steps, Int(j, "steps", 1, kMaxGenerationSteps));
  PARITY_ASSIGN_OR_RETURN(r.vocab, Int(j, "vocab", 1, int64_t{1} << 24));
  PARITY_ASSIGN_OR_RETURN(r.top_k, Int(j, "top_k", 1, std::min<int64_t>(65536, r.vocab)));
  if (r.prompts * r.steps > (int64_t{1} << 26)) return InvalidArgument("corpus.json: prompts x steps: more than 2^26");
  PARITY_ASSIGN_OR_RETURN(r.token_input, Str(j, "token_input", false));
  PARITY_ASSIGN_OR_RETURN(r.logits_output, Str(j, "logits_output", false));
  PARITY_ASSIGN_OR_RETURN(r.mask_input, Str(j, "mask_input", true));
  PARITY_ASSIGN_OR_RETURN(r.positions_input, Str(j, "positions_input", true));
  if (!j["inputs"].is_array()) return InvalidArgument("corpus.json: inputs: expected an array");
  if (j.contains("model") && j["model"].is_string()) r.model = j["model"].get<std::string>();
  const Json texts = j.value("texts", Json::array());
  if (!texts.is_array() || static_cast<int64_t>(texts.size()) != r.prompts)
    return InvalidArgument("corpus.json: texts: expected one entry per prompt (a string or null)");
  for (const Json& t : texts) r.texts.push_back(t.is_string() ? std::optional(t.get<std::string>()) : std::nullopt);
  return ReadInputs(j, r);
}

Status ReadArrays(CorpusRecord& r, bool calibrated) {
  PARITY_ASSIGN_OR_RETURN(Tensor off, Array(r, "prompt_offsets", DType::kInt64, {r.prompts + 1}));
  PARITY_ASSIGN_OR_RETURN(Tensor ids, Array(r, "prompt_ids", DType::kInt64, {}));
  r.offsets.assign(off.view<int64_t>().begin(), off.view<int64_t>().end());
  r.ids.assign(ids.view<int64_t>().begin(), ids.view<int64_t>().end());
  if (r.offsets.front() != 0 || r.offsets.back() != static_cast<int64_t>(r.ids.size()))
    return InvalidArgument("prompt_offsets.npy: expected 0 first and the number of prompt ids last");
  for (int64_t p = 0; p < r.prompts; ++p)
    if (r.offsets[p + 1] <= r.offsets[p] || r.offsets[p + 1] - r.offsets[p] > (int64_t{1} << 16))
      return InvalidArgument(fmt::format("prompt_offsets.npy: prompt {} has {} tokens (1 to 65536 due)", p,
                             r.offsets[p + 1] - r.offsets[p]));
  for (int64_t id : r.ids)
    if (id < 0 || id >= r.vocab) return InvalidArgument(fmt::format("prompt_ids.npy: token id {} is not in [0, {})", id, r.vocab));
  PARITY_ASSIGN_OR_RETURN(r.tokens, Array(r, "tokens", DType::kInt64, {r.prompts, r.steps}));
  PARITY_ASSIGN_OR_RETURN(r.topk_ids, Array(r, "topk_ids", DType::kInt32, {r.prompts, r.steps, r.top_k}));
  PARITY_ASSIGN_OR_RETURN(r.topk_logits, Array(r, "topk_logits", DType::kFloat32, {r.prompts, r.steps, r.top_k}));
  PARITY_ASSIGN_OR_RETURN(r.lse, Array(r, "lse", DType::kFloat64, {r.prompts, r.steps}));
  if (calibrated) {
    PARITY_ASSIGN_OR_RETURN(r.kl_fp64, Array(r, "kl_fp64", DType::kFloat64, {r.prompts, r.steps}));
    for (double v : r.kl_fp64.view<double>())
      if (!(v >= 0) || !std::isfinite(v)) return InvalidArgument(fmt::format("kl_fp64.npy: {} is not a KL", v));
  }
  for (int64_t t : r.tokens.view<int64_t>())
    if (t < 0 || t >= r.vocab) return InvalidArgument(fmt::format("tokens.npy: token id {} is not in [0, {})", t, r.vocab));
  for (int32_t t : r.topk_ids.view<int32_t>())
    if (t < 0 || t >= r.vocab) return InvalidArgument(fmt::format("topk_ids.npy: token id {} is not in [0, {})", t, r.vocab));
  return {};
}

}  // namespace

Result<CorpusRecord> LoadCorpusRecord(const std::filesystem::path& dir) {
  CorpusRecord r{.dir = dir};
  PARITY_ASSIGN_OR_RETURN(std::string text,
                          WithContext(ReadRegularFile(dir / "corpus.json", kMaxCorpusJsonBytes), "--corpus"));
  PARITY_ASSIGN_OR_RETURN(Json j, ParseJsonBounded(text, (dir / "corpus.json").string()));
  PARITY_RETURN_IF_ERROR(ReadHeader(j, r));
  const bool calibrated = j.contains("files") && j["files"].is_object() && j["files"].contains("kl_fp64");
  PARITY_RETURN_IF_ERROR(ReadArrays(r, calibrated));
  return r;
}

TensorSet CorpusPromptInputs(const CorpusRecord& r, int64_t p) {
  const std::span<const int64_t> ids = r.PromptIds(p);
  const int64_t n = static_cast<int64_t>(ids.size());
  TensorSet out;
  for (const CorpusInput& in : r.inputs) {
    if (in.empty_past) {
      out.Set(in.name, Tensor(in.dtype, *in.empty_past));
      continue;
    }
    Tensor t(in.dtype, {1, n});
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = in.name == r.token_input ? ids[i] : in.name == r.positions_input ? i : 1;
      if (in.dtype == DType::kInt32)
        t.mutable_view<int32_t>()[i] = static_cast<int32_t>(v);
      else if (in.dtype == DType::kFloat32)
        t.mutable_view<float>()[i] = static_cast<float>(v);
      else if (in.dtype == DType::kBool)
        t.mutable_view<uint8_t>()[i] = static_cast<uint8_t>(v != 0);
      else
        t.mutable_view<int64_t>()[i] = v;
    }
    out.Set(in.name, std::move(t));
  }
  return out;
}

}  // namespace parity
