// Is parity's latency what a plain ORT C++ loop would measure? On the
// built-in ResidualCnn and TransformerBlock at `all`, one session each:
// rounds alternate (a) parity's MeasureLatency (Session::Run: input checks,
// Tensor <-> Ort::Value, outputs copied back) and (b) Session::TimeRawRuns
// (Ort::Session::Run alone, inputs wrapped once), so both see the same
// machine state. Prints the p50 of each and the ratio; the target (issue 7)
// is a ratio within 3%. Measures and reports; exits 0 unless something fails.
//
//   latency_bench [--rounds N] [--runs N] [--threads N]
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/bench/latency.h"
#include "engine/runner/session_run.h"
#include "onnx/builtin_models.h"
#include "onnx/inspect.h"

namespace {

using namespace parity;

Sample Typical(const Model& m) {
  Sample s{"typical", {}};
  for (const auto& v : Inspect(m).inputs) {
    Tensor t(DType::kFloat32, *v.type.StaticShape());
    auto values = t.mutable_view<float>();
    uint32_t state = 12345;
    for (float& x : values) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
    }
    (void)s.tensors.Add(v.name, t);
  }
  return s;
}

int Bench(const char* name, const Model& model, int rounds, int runs, int threads) {
  RunConfig config;
  config.opt_level = OptLevel::kAll;
  config.intra_op_threads = threads;
  auto session = CreateSession(model, config, name);
  if (!session) {
    fmt::print(stderr, "{}: {}\n", name, session.error().message());
    return 1;
  }
  Sample sample = Typical(model);
  // Warm both paths once.
  if (auto w = MeasureLatency(*session, sample.tensors, {.warmup = 5, .runs = 3}); !w) {
    fmt::print(stderr, "{}: {}\n", name, w.error().message());
    return 1;
  }
  std::vector<double> parity_ms, raw_ms;
  for (int r = 0; r < rounds; ++r) {
    auto p = MeasureLatency(*session, sample.tensors, {.warmup = 0, .runs = runs, .max_seconds = 1e9});
    auto raw = session->TimeRawRuns(sample.tensors, runs);
    if (!p || !raw) {
      fmt::print(stderr, "{}: {}\n", name, !p ? p.error().message() : raw.error().message());
      return 1;
    }
    parity_ms.insert(parity_ms.end(), p->samples_ms.begin(), p->samples_ms.end());
    raw_ms.insert(raw_ms.end(), raw->begin(), raw->end());
  }
  LatencyStats a = SummarizeLatency(parity_ms), b = SummarizeLatency(raw_ms);
  fmt::print(
      "{:<18} runs {:>4}  parity p50 {:8.3f} ms (mean {:8.3f})  plain ORT p50 {:8.3f} ms (mean {:8.3f})  "
      "ratio {:.4f}\n",
      name, a.runs, a.p50_ms, a.mean_ms, b.p50_ms, b.mean_ms, a.p50_ms / b.p50_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 10, runs = 20, threads = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--runs"))
      runs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[i + 1]);
  }
  int rc = Bench("ResidualCnn", ResidualCnn(), rounds, runs, threads);
  rc |= Bench("TransformerBlock", TransformerBlock(), rounds, runs, threads);
  return rc;
}
