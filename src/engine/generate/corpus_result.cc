#include "engine/generate/corpus_result.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <nlohmann/json.hpp>

namespace parity {

Quantiles QuantilesOf(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    if (frac == 0 || v[hi] == v[lo]) return v[lo];
    return v[lo] + (v[hi] - v[lo]) * frac;
  };
  return {at(0.5), at(0.95), v.back()};
}

void ResolveCorpusTolerance(CorpusResult& r, const CorpusRecord& record, double given) {
  if (record.Calibrated()) {
    r.calibration_max_kl = 0;
    for (double v : record.kl_fp64.view<double>()) r.calibration_max_kl = std::max(r.calibration_max_kl, v);
  }
  if (given >= 0) {
    r.kl_tolerance = given, r.kl_tolerance_origin = "--kl-tolerance";
  } else if (record.Calibrated()) {
    r.kl_tolerance = std::max(kCorpusKlFloor, kCorpusCalibrationFactor * r.calibration_max_kl);
    r.kl_tolerance_origin = "calibrated";
  } else {
    r.kl_tolerance = kDefaultCorpusKlTolerance, r.kl_tolerance_origin = "default";
  }
}

bool CorpusPromptPasses(const CorpusPrompt& p, double kl_tolerance) {
  return p.AgreesThroughout() && !p.FreeRunDepartsEarlier() && p.MaxKl() <= kl_tolerance;
}

namespace {

void ByStep(CorpusResult& r) {
  std::vector<std::vector<double>> kl(r.steps);
  std::vector<int64_t> agree(r.steps, 0), seen(r.steps, 0);
  for (const CorpusPrompt& p : r.prompts)
    for (size_t s = 0; s < p.steps.size() && s < kl.size(); ++s) {
      kl[s].push_back(p.steps[s].kl);
      agree[s] += p.steps[s].agree;
      ++seen[s];
    }
  r.kl_by_step.clear();
  r.agreement_by_step.clear();
  for (int64_t s = 0; s < r.steps; ++s) {
    r.kl_by_step.push_back(QuantilesOf(std::move(kl[s])));
    r.agreement_by_step.push_back(seen[s] ? static_cast<double>(agree[s]) / static_cast<double>(seen[s]) : 0);
  }
}

// Failing prompts first (an ORT error, then the earliest divergence), then by
// the largest KL; ties by index.
void Worst(CorpusResult& r) {
  std::vector<size_t> order(r.prompts.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](size_t i) {
    const CorpusPrompt& p = r.prompts[i];
    const int64_t never = std::numeric_limits<int64_t>::max();
    const int64_t div = std::min(p.FirstDivergent().value_or(never), p.free_divergent.value_or(never));
    return std::make_tuple(p.error.empty(), div, -p.MaxKl(), p.index);
  };
  const size_t n = std::min(order.size(), kMaxWorstCorpusPrompts);
  std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  r.worst.assign(order.begin(), order.begin() + n);
}

}  // namespace

void SummarizeCorpus(CorpusResult& r) {
  std::vector<double> kl, prompt_max, ranks;
  r.prompts_agreeing = r.steps_agreeing = r.steps_judged = r.prompts_failing = r.prompts_errored = 0;
  r.prompts_free_departing = 0;
  r.max_tail_bound = r.max_tail_mass = r.ort_ms = 0;
  for (const CorpusPrompt& p : r.prompts) {
    for (const CorpusStep& s : p.steps) {
      kl.push_back(s.kl);
      ranks.push_back(static_cast<double>(s.rank));
      r.steps_agreeing += s.agree;
      r.max_tail_bound = std::max(r.max_tail_bound, s.kl_tail_bound);
      r.max_tail_mass = std::max(r.max_tail_mass, s.tail_mass);
    }
    r.steps_judged += static_cast<int64_t>(p.steps.size());
    prompt_max.push_back(p.MaxKl());
    r.prompts_agreeing += p.AgreesThroughout();
    r.prompts_errored += !p.error.empty();
    r.prompts_free_departing += p.FreeRunDepartsEarlier();
    r.prompts_failing += !CorpusPromptPasses(p, r.kl_tolerance);
    r.ort_ms += p.ort_ms;
  }
  r.kl_steps = QuantilesOf(std::move(kl));
  r.kl_prompt_max = QuantilesOf(std::move(prompt_max));
  r.rank = QuantilesOf(std::move(ranks));
  ByStep(r);
  Worst(r);
  r.pass = !r.prompts.empty() && r.prompts_failing == 0;
}

namespace {

using Json = nlohmann::json;

Json Num(double v) { return std::isfinite(v) ? Json(v) : Json(v > 0 ? "inf" : v < 0 ? "-inf" : "nan"); }

Result<double> NumOf(const Json& j) {
  if (j.is_number()) return j.get<double>();
  if (j == "inf") return std::numeric_limits<double>::infinity();
  if (j == "-inf") return -std::numeric_limits<double>::infinity();
  if (j == "nan") return std::numeric_limits<double>::quiet_NaN();
  return InvalidArgument("corpus row: a number expected");
}

}  // namespace

std::string FormatCorpusRow(const CorpusPrompt& p) {
  Json steps = Json::array();
  for (const CorpusStep& s : p.steps)
    steps.push_back(Json::array({Num(s.kl), Num(s.kl_tail_bound), s.agree ? 1 : 0, s.rank, s.ort_token, Num(s.tail_mass)}));
  return Json{{"index", p.index}, {"prompt_length", p.prompt_length}, {"error", p.error},
              {"ort_ms", p.ort_ms}, {"steps", steps}}.dump();
}

Result<CorpusPrompt> ParseCorpusRow(std::string_view line) {
  const Json j = Json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("steps") || !j["steps"].is_array())
    return InvalidArgument(fmt::format("corpus row: not a row: {:.80}", line));
  CorpusPrompt p;
  try {
    p.index = j.at("index").get<int64_t>();
    p.prompt_length = j.at("prompt_length").get<int64_t>();
    p.error = j.at("error").get<std::string>();
    p.ort_ms = j.at("ort_ms").get<double>();
    for (const Json& s : j["steps"]) {
      CorpusStep step;
      PARITY_ASSIGN_OR_RETURN(step.kl, NumOf(s.at(0)));
      PARITY_ASSIGN_OR_RETURN(step.kl_tail_bound, NumOf(s.at(1)));
      step.agree = s.at(2).get<int>() != 0;
      step.rank = s.at(3).get<int64_t>();
      step.ort_token = s.at(4).get<int64_t>();
      PARITY_ASSIGN_OR_RETURN(step.tail_mass, NumOf(s.at(5)));
      p.steps.push_back(step);
    }
  } catch (const Json::exception& e) {
    return InvalidArgument(fmt::format("corpus row: {}", e.what()));
  }
  return p;
}

}  // namespace parity
