// The cost of `parity locate` (issue 5, "what it must show" 5): the wall time
// of locate without ablation, every session it creates included, divided by
// the time to create the reference and target sessions and run each once;
// and the peak resident memory against the size of all intermediates.
// Each model runs in a forked child so that its peak RSS is its own.
// Reported, not gated: a plain main printing numbers.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "bench_util.h"
#include "engine/locate/locate.h"
#include "engine/inputs/random_sample.h"
#include "engine/runner/session_run.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"

namespace {

using namespace parity;
using bench::Clock;
using bench::InChild;
using bench::Ms;

double PlainMs(const Model& model, const Sample& sample, const RunConfig& reference, const RunConfig& target) {
  const auto t0 = Clock::now();
  for (const RunConfig* c : {&reference, &target}) {
    auto s = CreateSession(model, *c, "bench");
    if (!s || !s->Run(sample.tensors)) std::abort();
  }
  return Ms(t0, Clock::now());
}

int64_t IntermediateBytes(const Model& model, const Sample& sample) {
  auto observed = ObserveAllTensors(model);
  RunConfig c;
  auto s = CreateSession(observed->model, c, "bench");
  auto out = s->Run(sample.tensors);
  int64_t bytes = 0;
  for (const auto& [name, t] : *out) bytes += static_cast<int64_t>(t.byte_size());
  return bytes;
}

void Bench(const std::string& name, const Model& raw) {
  const Model model = WithNodeNames(raw);
  auto sample = RandomSample(model, 1);
  LocateOptions o;
  o.ablation = false;
  o.target.intra_op_threads = 1;
  o.reference.intra_op_threads = 1;
  o.model_label = name;
  // Warm up ORT's process-wide state (env, kernels' registries) once.
  PlainMs(model, *sample, o.reference, o.target);
  double plain = 1e300, located = 1e300;
  int sessions = 0;
  size_t fail = 0;
  for (int i = 0; i < 3; ++i) {
    plain = std::min(plain, PlainMs(model, *sample, o.reference, o.target));
    const auto t0 = Clock::now();
    auto r = Locate(model, nullptr, *sample, o);
    located = std::min(located, Ms(t0, Clock::now()));
    if (!r) std::abort();
    sessions = r->sessions_created;
    fail = r->CountStatus(Verdict::kFail);
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double peak_mib = ru.ru_maxrss / 1024.0;
  const double inter_mib = IntermediateBytes(model, *sample) / (1024.0 * 1024.0);
  std::printf("%-18s locate %8.1f ms (%d sessions, %zu fail)  plain %7.1f ms  ratio %.2f  peak RSS %.0f MiB  "
              "intermediates %.1f MiB\n",
              name.c_str(), located, sessions, fail, plain, located / plain, peak_mib, inter_mib);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  InChild([] { Bench("ResidualCnn", ResidualCnn()); });
  InChild([] { Bench("TransformerBlock", TransformerBlock()); });
  // A torch-exported model: argv[1], or the file locate_test exports.
  const std::filesystem::path torch =
      argc > 1 ? argv[1] : std::filesystem::temp_directory_path() / "parity_locate_test_resnet34.onnx";
  if (std::filesystem::exists(torch)) {
    InChild([&] {
      auto m = Model::Load(torch);
      if (m) Bench("torch " + torch.stem().string(), *m);
    });
  } else {
    std::printf("(no torch model at %s: run parity_engine_test --gtest_filter=Locate.* first)\n", torch.c_str());
  }
  return 0;
}
