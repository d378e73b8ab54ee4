// The generation check's decode loop (engine/generate/decode_loop.h) against
// a plain Python ORT loop doing the same steps (bench/generate_python.py):
// both load one decode-step model at `all` with one intra-op thread, feed
// the dump's prompt and run its generation record's steps greedily, the
// presents fed back as the next pasts. Prints the median wall time of one
// whole loop (every step, ids/mask/positions made, argmax taken); no judging.
// docs/generation.md has the numbers. Measures and reports; exits 0 unless
// something fails. `--cache-form` serves the caches as check's flag does
// (step_session.h): the whole loop's time then includes the shared form's
// checks (a copy of each cache and a rerun per step), so the ORT calls of
// the loop (each step's deployed run) are printed apart.
//
//   generate_bench MODEL.onnx DUMP_DIR [--rounds N] [--cache-form fresh|bound|shared]
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_util.h"
#include "engine/generate/bound_loop.h"
#include "engine/generate/generation_record.h"
#include "engine/torch/torch_dump.h"
#include "ort/session.h"

int main(int argc, char** argv) {
  using namespace parity;
  if (argc < 3) {
    fmt::print(stderr, "usage: generate_bench MODEL.onnx DUMP_DIR [--rounds N]\n");
    return 2;
  }
  int rounds = 30;
  CacheForm form = CacheForm::kFresh;
  for (int i = 3; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--cache-form") == 0) {
      auto f = ParseCacheForm(argv[i + 1]);
      if (!f) return fmt::print(stderr, "{}\n", f.error().message()), 2;
      form = *f;
    }
  }
  auto dump = LoadTorchDump(argv[2]);
  if (!dump) return fmt::print(stderr, "{}\n", dump.error().message()), 1;
  auto record = LoadGenerationRecord(*dump);
  if (!record || !*record) return fmt::print(stderr, "{}: no generation record\n", argv[2]), 1;
  auto prompt = LoadTorchInputs(*dump);
  if (!prompt) return fmt::print(stderr, "{}\n", prompt.error().message()), 1;
  RunConfig config;
  config.opt_level = OptLevel::kAll;
  config.intra_op_threads = 1;
  auto session = StepSession::Open(argv[1], config, form, CachePairsOf(**record));
  if (!session) return fmt::print(stderr, "{}\n", session.error().message()), 1;
  const int64_t steps = (*record)->length;
  std::vector<double> ms, ort_ms;
  std::vector<int64_t> tokens;
  for (int r = 0; r < rounds + 2; ++r) {  // two warm-up rounds
    tokens.clear();
    double calls = 0;
    std::vector<GenerationCheck> checks;
    const auto start = bench::Clock::now();
    Status s = RunLoopInForm(*session, **record, *prompt, steps, [&](const DecodeStepOutput& step) {
      tokens.push_back(step.tokens.front());
      calls += step.ms;
      return Status{};
    }, nullptr, checks);
    const auto end = bench::Clock::now();
    if (!s) return fmt::print(stderr, "{}\n", s.error().message()), 1;
    if (r >= 2) ms.push_back(bench::Ms(start, end)), ort_ms.push_back(calls);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(ort_ms.begin(), ort_ms.end());
  fmt::print("parity decode loop ({}): {} steps, median {:.3f} ms per loop ({:.3f} ms per step; the steps' ORT calls "
             "{:.3f} ms), {} rounds; tokens {}\n", CacheFormName(session->form()), steps, ms[ms.size() / 2],
             ms[ms.size() / 2] / static_cast<double>(steps), ort_ms[ort_ms.size() / 2], ms.size(),
             fmt::join(tokens, " "));
  return 0;
}
