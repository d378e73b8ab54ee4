#include "engine/generate/corpus_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "engine/generate/decode_tensors.h"

namespace parity {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double LogSumExp(std::span<const float> row) {
  double mx = -kInf;
  for (float v : row) mx = std::max(mx, static_cast<double>(v));
  if (!std::isfinite(mx)) return mx;
  double sum = 0;
  for (float v : row) sum += std::exp(static_cast<double>(v) - mx);
  return mx + std::log(sum);
}

// The tail's KL terms: (log q_tail, log q_min) over the tokens not in S.
std::pair<double, double> TailMass(std::span<const float> ort, const std::vector<uint8_t>& in_s, double lse_q) {
  double mx = -kInf, mn = kInf;
  for (size_t j = 0; j < ort.size(); ++j)
    if (!in_s[j]) mx = std::max(mx, static_cast<double>(ort[j])), mn = std::min(mn, static_cast<double>(ort[j]));
  if (!std::isfinite(mx)) return {-kInf, -kInf};
  double sum = 0;
  for (size_t j = 0; j < ort.size(); ++j)
    if (!in_s[j]) sum += std::exp(static_cast<double>(ort[j]) - mx);
  return {mx + std::log(sum) - lse_q, mn - lse_q};
}

void RankAndTop(std::span<const float> ort, int64_t token, CorpusStep& out) {
  int64_t best = 0, above = 0;
  const float q = ort[token];
  for (size_t j = 0; j < ort.size(); ++j) {
    if (ort[j] > ort[best]) best = static_cast<int64_t>(j);
    if (ort[j] > q || (ort[j] == q && static_cast<int64_t>(j) < token)) ++above;
  }
  out.ort_token = best;
  out.rank = above + 1;
  out.agree = best == token;
}

}  // namespace

std::optional<int64_t> CorpusPrompt::FirstDivergent() const {
  for (size_t s = 0; s < steps.size(); ++s)
    if (!steps[s].agree) return static_cast<int64_t>(s);
  return std::nullopt;
}

double CorpusPrompt::MaxKl() const {
  double m = 0;
  for (const CorpusStep& s : steps) m = std::max(m, s.kl);
  return m;
}

double CorpusPrompt::MeanKl() const {
  double sum = 0;
  for (const CorpusStep& s : steps) sum += s.kl;
  return steps.empty() ? 0 : sum / static_cast<double>(steps.size());
}

CorpusStep CompareCorpusStep(const CorpusRecord& r, int64_t p, int64_t s, std::span<const float> ort) {
  CorpusStep out;
  RankAndTop(ort, r.Token(p, s), out);
  const double lse_p = r.Lse(p, s), lse_q = LogSumExp(ort);
  const auto ids = r.TopIds(p, s);
  const auto logits = r.TopLogits(p, s);
  std::vector<uint8_t> in_s(ort.size(), 0);
  double kl = 0, p_sum = 0, lp_min = kInf;
  for (size_t i = 0; i < ids.size(); ++i) {
    const double lp = logits[i] - lse_p, lq = ort[ids[i]] - lse_q, pi = std::exp(lp);
    in_s[ids[i]] = 1;
    kl += pi * (lp - lq);
    p_sum += pi;
    lp_min = std::min(lp_min, lp);
  }
  // No tail at all when k is the vocabulary (1 - p_sum is then rounding only).
  const double p_tail = ids.size() >= ort.size() ? 0.0 : std::max(0.0, 1.0 - p_sum);
  out.tail_mass = p_tail;
  if (p_tail > 0) {
    const auto [log_q_tail, log_q_min] = TailMass(ort, in_s, lse_q);
    const double log_p_tail = std::log(p_tail);
    kl += std::isfinite(log_q_tail) ? p_tail * (log_p_tail - log_q_tail) : kInf;
    const double spread = (lp_min - log_p_tail) + (log_q_tail - log_q_min);
    out.kl_tail_bound = std::isfinite(log_q_min) ? p_tail * std::max(0.0, spread) : kInf;
  }
  // Rounding can leave a healthy step at -1e-17; a NaN in ORT's row is no
  // distribution at all: infinitely far.
  out.kl = std::isnan(kl) ? kInf : std::max(0.0, kl);
  if (std::isnan(out.kl_tail_bound)) out.kl_tail_bound = kInf;
  return out;
}

Status CorpusFitsModel(const CorpusRecord& r, const ort::Session& session, const std::string& model_path) {
  const auto inputs = session.input_names(), outputs = session.output_names();
  auto has = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  for (const std::string& name : inputs) {
    const bool known = std::any_of(r.inputs.begin(), r.inputs.end(), [&](const CorpusInput& c) { return c.name == name; });
    if (!known) return InvalidArgument(fmt::format("{}: input '{}' is not in the corpus record's inputs", model_path, name));
  }
  if (!has(outputs, r.logits_output))
    return InvalidArgument(fmt::format("{}: no output '{}' (the corpus record's logits)", model_path, r.logits_output));
  for (const KvPair& kv : r.kv)
    if (!has(outputs, kv.present) || !has(inputs, kv.past))
      return InvalidArgument(fmt::format("{}: the cache pair {} -> {} of the corpus record is not the model's",
                                         model_path, kv.present, kv.past));
  return {};
}

namespace {

// The next step's inputs: PyTorch's token, the mask one longer, the
// positions one on, each past its present (ORT's buffer, no copy).
Result<TensorSet> TeacherForcedInputs(const CorpusRecord& r, const TensorSet& fed, const TensorSet& outputs,
                                      int64_t token) {
  PARITY_ASSIGN_OR_RETURN(
      TensorSet next,
      NextFeeds({.token = r.token_input, .mask = r.mask_input, .positions = r.positions_input}, fed, {token}));
  for (const KvPair& kv : r.kv)
    if (const Tensor* present = outputs.Find(kv.present); present && next.Contains(kv.past)) next.Set(kv.past, *present);
  return next;
}

// The last position's row of the logits, as float32 (a view when it already is).
Result<std::span<const float>> LastRow(const Tensor& logits, Tensor& scratch) {
  if (logits.dtype() == DType::kFloat32 && (logits.rank() == 3 || logits.rank() == 2) && logits.shape()[0] == 1) {
    const int64_t vocab = logits.shape().back();
    return logits.view<float>().subspan(logits.size() - vocab, vocab);
  }
  PARITY_ASSIGN_OR_RETURN(scratch, LastPositionLogits(logits));
  if (scratch.shape()[0] != 1) return InvalidArgument("logits of a batch of more than one row: a corpus feeds batch 1");
  return scratch.view<float>();
}

}  // namespace

Result<CorpusPrompt> RunCorpusPrompt(const ort::Session& session, const CorpusRecord& r, int64_t p) {
  CorpusPrompt out{.index = p, .prompt_length = static_cast<int64_t>(r.PromptIds(p).size())};
  TensorSet fed;
  const TensorSet all = CorpusPromptInputs(r, p);
  for (const std::string& name : session.input_names())
    if (const Tensor* t = all.Find(name)) fed.Set(name, *t);
  for (int64_t s = 0; s < r.steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    auto outputs = session.Run(fed, {}, ort::OutputBuffers::kBorrowed);
    out.ort_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!outputs) {
      out.error = fmt::format("step {}: {}", s, outputs.error().message());
      return out;
    }
    const Tensor* logits = outputs->Find(r.logits_output);
    if (!logits) return InvalidArgument(fmt::format("the model has no output '{}' (the logits)", r.logits_output));
    Tensor scratch;
    PARITY_ASSIGN_OR_RETURN(std::span<const float> row, WithContext(LastRow(*logits, scratch), fmt::format("step {}", s)));
    if (static_cast<int64_t>(row.size()) != r.vocab)
      return InvalidArgument(fmt::format("step {}: ORT's logits have {} entries where the corpus record's vocabulary "
                                         "is {}: the record is not this model's", s, row.size(), r.vocab));
    out.steps.push_back(CompareCorpusStep(r, p, s, row));
    if (s + 1 < r.steps) {
      PARITY_ASSIGN_OR_RETURN(fed, TeacherForcedInputs(r, fed, *outputs, r.Token(p, s)));
    }
  }
  return out;
}

Result<CorpusSession> CorpusSession::Open(const std::string& model_path, const RunConfig& config,
                                          const CorpusRecord& r) {
  PARITY_ASSIGN_OR_RETURN(StepSession step,
                          WithContext(StepSession::Open(model_path, config, CacheForm::kFresh, {}), model_path));
  PARITY_RETURN_IF_ERROR(CorpusFitsModel(r, *step.plain(), model_path));
  return CorpusSession(std::move(step), &r);
}

Result<std::vector<CorpusPrompt>> RunCorpusPrompts(const ort::Session& session, const CorpusRecord& r,
                                                   const std::vector<int64_t>& indices,
                                                   const std::function<void(size_t, size_t)>& done) {
  std::vector<CorpusPrompt> out;
  out.reserve(indices.size());
  for (int64_t p : indices) {
    if (p < 0 || p >= r.prompts) return InvalidArgument(fmt::format("prompt {} is not in [0, {})", p, r.prompts));
    PARITY_ASSIGN_OR_RETURN(CorpusPrompt one, WithContext(RunCorpusPrompt(session, r, p), fmt::format("prompt {}", p)));
    out.push_back(std::move(one));
    if (done) done(out.size(), indices.size());
  }
  return out;
}

}  // namespace parity
