#include "engine/generate/generation_record.h"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <tuple>
#include <nlohmann/json.hpp>

#include "core/json_in.h"
#include "core/json_type.h"
#include "core/regular_file.h"

namespace parity {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::unexpected<Error> Wrong(const std::string& key, std::string_view expected, const OrderedJson& got) {
  return InvalidArgument(fmt::format("manifest.json: {}: expected {}, got {}", key, expected, JsonTypeName(got)));
}

const OrderedJson* Find(const OrderedJson& j, std::string_view key) {
  auto it = j.find(std::string(key));
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

Result<std::string> String(const OrderedJson& j, const std::string& path, std::string_view key, bool required = true) {
  const OrderedJson* v = Find(j, key);
  if (!v) {
    if (required) return InvalidArgument(fmt::format("manifest.json: {}.{}: required key missing", path, key));
    return std::string();
  }
  if (!v->is_string()) return Wrong(fmt::format("{}.{}", path, key), "a string", *v);
  return v->get<std::string>();
}

// A file inside the dump: relative, no "..".
Result<std::string> File(const OrderedJson& j, const std::string& path, std::string_view key, bool required = true) {
  PARITY_ASSIGN_OR_RETURN(std::string file, String(j, path, key, required));
  if (file.empty()) return file;
  const std::filesystem::path p(file);
  bool escapes = p.is_absolute();
  for (const auto& part : p) escapes = escapes || part == "..";
  if (escapes)
    return InvalidArgument(fmt::format("manifest.json: {}.{}: '{}' is not a file inside the dump directory", path,
                                       key, file));
  return file;
}

// A non-empty string: a name the loop looks up.
Result<std::string> Name(const OrderedJson& j, const std::string& path, std::string_view key, bool required = true) {
  PARITY_ASSIGN_OR_RETURN(std::string name, String(j, path, key, required));
  if (name.empty() && Find(j, key) != nullptr)
    return InvalidArgument(fmt::format("manifest.json: {}.{}: an empty name", path, key));
  return name;
}

// An integer in [lo, hi]; an unsigned one past int64 is out of range, never wrapped.
Result<int64_t> IntIn(const OrderedJson& v, const std::string& key, int64_t lo, int64_t hi) {
  if (!v.is_number_integer() && !v.is_number_unsigned()) return Wrong(key, "an integer", v);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    return InvalidArgument(fmt::format("manifest.json: {}: {} is not in [{}, {}]", key, v.get<uint64_t>(), lo, hi));
  const int64_t x = v.get<int64_t>();
  if (x < lo && hi == INT64_MAX)
    return InvalidArgument(fmt::format("manifest.json: {}: {} is less than {}", key, x, lo));
  if (x < lo || x > hi) return InvalidArgument(fmt::format("manifest.json: {}: {} is not in [{}, {}]", key, x, lo, hi));
  return x;
}

Result<int64_t> Int(const OrderedJson& j, const std::string& path, std::string_view key, int64_t lo, int64_t hi) {
  const OrderedJson* v = Find(j, key);
  if (!v) return InvalidArgument(fmt::format("manifest.json: {}.{}: required key missing", path, key));
  return IntIn(*v, fmt::format("{}.{}", path, key), lo, hi);
}

// An array of at most `max_count` integers in [lo, hi], each named by its index.
Result<std::vector<int64_t>> Ints(const OrderedJson& v, const std::string& key, int64_t lo, int64_t hi,
                                  size_t max_count) {
  if (!v.is_array()) return Wrong(key, "an array of integers", v);
  if (v.size() > max_count)
    return InvalidArgument(fmt::format("manifest.json: {}: {} entries, more than {}", key, v.size(), max_count));
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer() && !v[i].is_number_unsigned()) return Wrong(key, "an array of integers", v);
    PARITY_ASSIGN_OR_RETURN(int64_t x, IntIn(v[i], fmt::format("{}[{}]", key, i), lo, hi));
    out.push_back(x);
  }
  return out;
}

// Dimensions of a present, as the .npy reader bounds them.
constexpr int64_t kMaxDim = int64_t{1} << 40;
constexpr size_t kMaxRank = 64;

Result<TorchFiles> FileMap(const OrderedJson& j, const std::string& key) {
  if (!j.is_object()) return Wrong(key, "an object of files", j);
  TorchFiles out;
  for (const auto& [name, v] : j.items()) {
    OrderedJson one = {{"file", v}};
    PARITY_ASSIGN_OR_RETURN(std::string file, File(one, key + "." + name, "file"));
    out.emplace_back(name, std::move(file));
  }
  return out;
}

// Step `index` of a record of `batch` rows (`stepwise`: the prompt one token at a time, no index or tokens).
Result<RecordedStep> ParseStep(const OrderedJson& j, const std::string& key, bool stepwise, int64_t index = 0,
                               int64_t batch = 1) {
  if (!j.is_object()) return Wrong(key, "an object", j);
  RecordedStep s;
  if (!stepwise) {
    PARITY_ASSIGN_OR_RETURN(s.step, Int(j, key, "step", 0, kMaxGenerationSteps - 1));
    if (s.step != index)
      return InvalidArgument(fmt::format("manifest.json: {}.step: {} where step {} is due (steps are 0, 1, ... in order)",
                                         key, s.step, index));
    const OrderedJson* tokens = Find(j, "tokens");
    if (!tokens) return InvalidArgument(fmt::format("manifest.json: {}.tokens: required key missing", key));
    // Token ids index the vocabulary: never negative.
    PARITY_ASSIGN_OR_RETURN(s.tokens,
                            Ints(*tokens, key + ".tokens", 0, INT64_MAX, static_cast<size_t>(kMaxGenerationTokens)));
    if (static_cast<int64_t>(s.tokens.size()) != batch)
      return InvalidArgument(fmt::format("manifest.json: {}.tokens: {} tokens for a batch of {}", key, s.tokens.size(),
                                         batch));
    if (const OrderedJson* origins = Find(j, "origins")) {
      PARITY_ASSIGN_OR_RETURN(s.origins, Ints(*origins, key + ".origins", 0, batch - 1, static_cast<size_t>(batch)));
      if (static_cast<int64_t>(s.origins.size()) != batch)
        return InvalidArgument(fmt::format("manifest.json: {}.origins: {} for {} beams", key, s.origins.size(), batch));
    }
    if (const OrderedJson* draws = Find(j, "draws")) {
      if (!draws->is_array() || static_cast<int64_t>(draws->size()) != batch)
        return Wrong(key + ".draws", fmt::format("an array of {} numbers in [0, 1)", batch), *draws);
      for (const OrderedJson& d : *draws) {
        if (!d.is_number() || !(d.get<double>() >= 0 && d.get<double>() < 1))
          return Wrong(key + ".draws", "numbers in [0, 1)", d);
        s.draws.push_back(d.get<double>());
      }
    }
    PARITY_ASSIGN_OR_RETURN(s.logits_fp64, File(j, key, "logits_fp64", false));
  }
  PARITY_ASSIGN_OR_RETURN(s.logits, File(j, key, "logits"));
  const OrderedJson* presents = Find(j, "presents");
  if (presents && !presents->is_object()) return Wrong(key + ".presents", "an object", *presents);
  if (presents)
    for (const auto& [name, p] : presents->items()) {
      const std::string pkey = fmt::format("{}.presents.{}", key, name);
      if (!p.is_object()) return Wrong(pkey, "an object", p);
      RecordedPresent rp{.name = name};
      PARITY_ASSIGN_OR_RETURN(rp.file, File(p, pkey, "file", false));
      if (const OrderedJson* shape = Find(p, "shape")) {
        PARITY_ASSIGN_OR_RETURN(rp.shape, Ints(*shape, pkey + ".shape", 0, kMaxDim, kMaxRank));
      }
      s.presents.push_back(std::move(rp));
    }
  return s;
}

Status ParseEncoder(const OrderedJson& g, GenerationRecord& r) {
  if (const OrderedJson* feeds = Find(g, "encoder_feeds")) {
    if (!feeds->is_array()) return Wrong("generation.encoder_feeds", "an array", *feeds);
    for (size_t i = 0; i < feeds->size(); ++i) {
      const std::string key = fmt::format("generation.encoder_feeds[{}]", i);
      if (!(*feeds)[i].is_object()) return Wrong(key, "an object", (*feeds)[i]);
      PARITY_ASSIGN_OR_RETURN(std::string input, Name((*feeds)[i], key, "input"));
      PARITY_ASSIGN_OR_RETURN(std::string output, Name((*feeds)[i], key, "encoder_output"));
      r.encoder_feeds.emplace_back(std::move(input), std::move(output));
    }
  }
  const OrderedJson* enc = Find(g, "encoder");
  if (!enc) return {};
  if (!enc->is_object()) return Wrong("generation.encoder", "an object", *enc);
  const OrderedJson* in = Find(*enc, "inputs");
  const OrderedJson* out = Find(*enc, "outputs");
  if (!in || !out) return InvalidArgument("manifest.json: generation.encoder: needs inputs and outputs");
  PARITY_ASSIGN_OR_RETURN(r.encoder_inputs, FileMap(*in, "generation.encoder.inputs"));
  PARITY_ASSIGN_OR_RETURN(r.encoder_outputs, FileMap(*out, "generation.encoder.outputs"));
  return {};
}

// "search": {kind, beams, top_k, top_p, temperature}; absent: greedy.
Status ParseSearch(const OrderedJson& g, GenerationRecord& r) {
  const OrderedJson* j = Find(g, "search");
  if (!j) return {};
  if (!j->is_object()) return Wrong("generation.search", "an object", *j);
  const std::string k = "generation.search";
  PARITY_ASSIGN_OR_RETURN(r.search.kind, String(*j, k, "kind"));
  if (r.search.kind != "greedy" && r.search.kind != "beam" && r.search.kind != "sample")
    return InvalidArgument(fmt::format("manifest.json: {}.kind: '{}' is not greedy, beam or sample", k, r.search.kind));
  if (Find(*j, "beams")) {
    PARITY_ASSIGN_OR_RETURN(r.search.beams, Int(*j, k, "beams", 1, 1024));
  }
  if (Find(*j, "top_k")) {
    PARITY_ASSIGN_OR_RETURN(r.search.top_k, Int(*j, k, "top_k", 0, kMaxGenerationTokens));
  }
  for (auto [key, out, lo, hi] : {std::tuple{"top_p", &r.search.top_p, 0.0, 1.0},
                                  std::tuple{"temperature", &r.search.temperature, 0.0, 1e6}})
    if (const OrderedJson* v = Find(*j, key)) {
      if (!v->is_number() || !(v->get<double>() > lo && v->get<double>() <= hi))
        return Wrong(fmt::format("{}.{}", k, key), fmt::format("a number in ({}, {}]", lo, hi), *v);
      *out = v->get<double>();
    }
  if ((r.search.kind == "beam") != (r.search.beams > 1) || (r.search.beams > 1 && r.batch != 1))
    return InvalidArgument(fmt::format("manifest.json: {}.beams: {} beams for a {} search of a batch of {} (beam "
                                       "search: more than one beam, a batch of 1)", k, r.search.beams, r.search.kind,
                                       r.batch));
  if (r.length * r.search.beams > kMaxGenerationTokens)
    return InvalidArgument(fmt::format("manifest.json: {}.beams: {} steps of {} beams, more than {} tokens", k,
                                       r.length, r.search.beams, kMaxGenerationTokens));
  return {};
}

Result<GenerationRecord> Parse(const OrderedJson& g) {
  const std::string k = "generation";
  if (!g.is_object()) return Wrong(k, "an object", g);
  GenerationRecord r;
  PARITY_ASSIGN_OR_RETURN(std::string schema, String(g, k, "schema"));
  if (schema != kGenerationSchema)
    return InvalidArgument(fmt::format("manifest.json: generation.schema: '{}' is not {}", schema, kGenerationSchema));
  PARITY_ASSIGN_OR_RETURN(r.length, Int(g, k, "length", 1, kMaxGenerationSteps));
  PARITY_ASSIGN_OR_RETURN(r.batch, Int(g, k, "batch", 1, kMaxGenerationTokens));
  if (r.length * r.batch > kMaxGenerationTokens)
    return InvalidArgument(fmt::format("manifest.json: generation.batch: {} steps of a batch of {} are {} tokens, more "
                                       "than {}", r.length, r.batch, r.length * r.batch, kMaxGenerationTokens));
  PARITY_ASSIGN_OR_RETURN(r.prompt_length, Int(g, k, "prompt_length", 1, kMaxGenerationTokens));
  PARITY_ASSIGN_OR_RETURN(r.token_input, Name(g, k, "token_input"));
  PARITY_ASSIGN_OR_RETURN(r.mask_input, Name(g, k, "mask_input", false));
  PARITY_ASSIGN_OR_RETURN(r.positions_input, Name(g, k, "positions_input", false));
  PARITY_ASSIGN_OR_RETURN(r.cache_branch_input, Name(g, k, "cache_branch_input", false));
  PARITY_ASSIGN_OR_RETURN(r.logits_output, Name(g, k, "logits_output"));
  const OrderedJson* kv = Find(g, "kv_map");
  if (!kv || !kv->is_array() || kv->empty())
    return InvalidArgument("manifest.json: generation.kv_map: expected a non-empty array of {present, past}");
  for (size_t i = 0; i < kv->size(); ++i) {
    const std::string key = fmt::format("generation.kv_map[{}]", i);
    if (!(*kv)[i].is_object()) return Wrong(key, "an object", (*kv)[i]);
    PARITY_ASSIGN_OR_RETURN(std::string present, Name((*kv)[i], key, "present"));
    PARITY_ASSIGN_OR_RETURN(std::string past, Name((*kv)[i], key, "past"));
    r.kv.push_back({std::move(present), std::move(past)});
  }
  PARITY_RETURN_IF_ERROR(ParseEncoder(g, r));
  PARITY_RETURN_IF_ERROR(ParseSearch(g, r));
  // Beam search: K rows after the prefill, each step's tokens one per beam.
  const int64_t rows = r.batch * r.search.beams;
  const OrderedJson* steps = Find(g, "steps");
  if (!steps || !steps->is_array()) return InvalidArgument("manifest.json: generation.steps: expected an array");
  // Counted before any step is read: the loop runs, and the report lists, one per step.
  if (static_cast<int64_t>(steps->size()) != r.length)
    return InvalidArgument(fmt::format("manifest.json: generation.steps: {} steps for a length of {}{}", steps->size(),
                                       r.length,
                                       static_cast<int64_t>(steps->size()) > kMaxGenerationSteps
                                           ? fmt::format(" (at most {} steps)", kMaxGenerationSteps)
                                           : ""));
  r.steps.reserve(steps->size());
  for (size_t i = 0; i < steps->size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(RecordedStep s, ParseStep((*steps)[i], fmt::format("generation.steps[{}]", i), false,
                                                      static_cast<int64_t>(i), rows));
    if (r.search.kind == "beam" && s.origins.empty())
      return InvalidArgument(fmt::format("manifest.json: generation.steps[{}].origins: required for beam search", i));
    if (r.search.kind == "sample" && s.draws.empty())
      return InvalidArgument(fmt::format("manifest.json: generation.steps[{}].draws: required for sampling", i));
    r.steps.push_back(std::move(s));
  }
  if (const OrderedJson* sw = Find(g, "stepwise")) {
    PARITY_ASSIGN_OR_RETURN(r.stepwise, ParseStep(*sw, k + ".stepwise", true));
  }
  return r;
}

}  // namespace

Result<std::optional<GenerationRecord>> LoadGenerationRecord(const TorchDump& dump) {
  // LoadTorchDump has read and checked this manifest (not a symlink unless allowed).
  const auto path = dump.dir / "manifest.json";
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, kMaxManifestBytes));
  PARITY_ASSIGN_OR_RETURN(OrderedJson j, WithContext(ParseOrderedJsonBounded(text, path.string()), path.string()));
  const OrderedJson* g = Find(j, "generation");
  if (!g) return std::optional<GenerationRecord>();
  PARITY_ASSIGN_OR_RETURN(GenerationRecord r, WithContext(Parse(*g), dump.dir.string()));
  return std::optional<GenerationRecord>(std::move(r));
}

Result<Tensor> LoadRecordedTensor(const TorchDump& dump, const std::string& file) {
  PARITY_ASSIGN_OR_RETURN(TensorSet set, LoadTorchFiles(dump, {{"t", file}}));
  return *set.Find("t");
}

}  // namespace parity
