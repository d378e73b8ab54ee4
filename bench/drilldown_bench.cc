// The cost of locate's drill-down (issue 14, "must show"):
//   1. sub-region sessions against the size of the region narrowed: a
//      ResNet-like trunk of 2..48 residual blocks (one NCHWc region at `all`),
//      a conv weight x1.01 planted in the middle block and in the last one;
//   2. locate with drill-down on a torch model (argv[1], e.g. resnet50 from
//      bench/drilldown_faults.py's cache) with a planted fault, against
//      creating the reference and target sessions and running each once.
// Each case runs in a forked child. Reported, not gated. Environment:
// DRILL_BLOCKS=N (one trunk size only), DRILL_TORCH_ONLY=1 (part 2 only),
// DRILL_VERBOSE=1 (print each locate report).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "bench_util.h"
#include "engine/locate/locate.h"
#include "engine/locate/locate_test_util.h"
#include "engine/inputs/random_sample.h"
#include "engine/runner/session_run.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/graph.h"
#include "report/locate_report.h"

namespace {

using namespace parity;
using bench::Clock;
using bench::InChild;
using bench::Ms;

// This process's CPU time in ms: less sensitive than wall time to other
// work on a shared machine (locate runs ORT with one intra-op thread).
double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// `blocks` residual blocks of 16 channels on 32x32 (drilldown_test's DeepCnn, unstrided).
Model Trunk(int blocks) { return WithNodeNames(ResidualTrunk(blocks, /*downsample_every=*/0)); }

LocateOptions Options() { return parity::testing::DrillDownOptions(); }

// The `which`-th Conv's weights x1.01 (counting from 0; -1: the last).
std::pair<Model, std::string> Planted(const Model& model, int which) {
  auto view = BuildGraphView(model, {.infer_shapes = false});
  std::vector<size_t> convs;
  for (size_t i = 0; i < view->nodes.size(); ++i)
    if (view->nodes[i].op_type == "Conv") convs.push_back(i);
  const auto& n = view->nodes[convs[which < 0 ? convs.size() - 1 : static_cast<size_t>(which)]];
  auto m = ScaleInitializer(model, n.inputs[1], 1.01);
  if (!m) std::abort();
  return {std::move(*m), n.name};
}

void SessionsVsSize(int blocks, bool last) {
  const Model model = Trunk(blocks);
  const int convs = 1 + 2 * blocks;
  auto [planted, node] = Planted(model, last ? -1 : convs / 2);
  auto sample = RandomSample(model, 1);
  const auto t0 = Clock::now();
  auto r = Locate(model, &planted, *sample, Options());
  const double ms = Ms(t0, Clock::now());
  if (!r || r->culprits.empty()) {
    std::printf("blocks %3d: no culprit\n", blocks);
    return;
  }
  if (std::getenv("DRILL_VERBOSE")) PrintLocateSummary(*r, stdout);
  const auto& c = r->culprits.front();
  const size_t region = c.narrowing ? c.narrowing->steps.front().covers.size() : c.covers.size();
  const bool hit = std::find(c.covers.begin(), c.covers.end(), node) != c.covers.end();
  std::printf("blocks %3d %-6s region %4zu nodes -> %zu (hit %d): %2zu steps, %2d sub-regions, %2d drill sessions "
              "(log2(region) %.1f), locate %.0f ms, %d sessions in all\n",
              blocks, last ? "last" : "middle", region, c.covers.size(), hit,
              c.narrowing ? c.narrowing->steps.size() : 0, c.narrowing ? c.narrowing->sub_regions_run : 0,
              c.narrowing ? c.narrowing->sessions : 0, std::log2(static_cast<double>(region)), ms,
              r->sessions_created);
  std::fflush(stdout);
}

// `where`: 0 the first Conv, 1 the middle one, 2 the last.
void TorchCost(const std::filesystem::path& path, int where) {
  auto raw = Model::Load(path);
  if (!raw) {
    std::printf("cannot load %s\n", path.c_str());
    return;
  }
  const Model model = WithNodeNames(*raw);
  auto view = BuildGraphView(model, {.infer_shapes = false});
  size_t convs = 0;
  for (const auto& n : view->nodes) convs += n.op_type == "Conv";
  auto [planted, node] = Planted(model, where == 0 ? 0 : where == 1 ? static_cast<int>(convs / 2) : -1);
  auto sample = RandomSample(model, 1);
  const LocateOptions o = Options();
  double plain_cpu = 1e300, locate_cpu = 1e300, undrilled_cpu = 1e300;
  const auto plain = [&] {
    const double c0 = CpuMs();
    const auto t0 = Clock::now();
    const std::pair<const Model*, const RunConfig*> runs[] = {{&model, &o.reference}, {&planted, &o.target}};
    for (const auto& [m, c] : runs) {
      auto s = CreateSession(*m, *c, "bench");
      if (!s || !s->Run(sample->tensors)) std::abort();
    }
    plain_cpu = std::min(plain_cpu, CpuMs() - c0);
    return Ms(t0, Clock::now());
  };
  plain();  // warm-up
  LocateOptions without = o;
  without.drilldown = false;
  double plain_ms = 1e300, locate_ms = 1e300, undrilled_ms = 1e300;
  std::optional<LocateReport> last;
  for (int i = 0; i < 3; ++i) {
    plain_ms = std::min(plain_ms, plain());
    auto t0 = Clock::now();
    double c0 = CpuMs();
    auto r = Locate(model, &planted, *sample, o);
    locate_ms = std::min(locate_ms, Ms(t0, Clock::now()));
    locate_cpu = std::min(locate_cpu, CpuMs() - c0);
    if (!r) std::abort();
    last = std::move(*r);
    t0 = Clock::now();
    c0 = CpuMs();
    if (!Locate(model, &planted, *sample, without)) std::abort();
    undrilled_ms = std::min(undrilled_ms, Ms(t0, Clock::now()));
    undrilled_cpu = std::min(undrilled_cpu, CpuMs() - c0);
  }
  const auto& c = last->culprits.front();
  std::printf("%s, planted %s: locate with drill-down %.0f ms (%d sessions; drill-down %d sessions, %d sub-regions, "
              "region %zu -> %zu nodes), plain create+run of reference and target %.0f ms, ratio %.2f "
              "(without drill-down %.0f ms, ratio %.2f); CPU time: ratio %.2f (without drill-down %.2f)\n",
              path.stem().c_str(), node.c_str(), locate_ms, last->sessions_created,
              c.narrowing ? c.narrowing->sessions : 0, c.narrowing ? c.narrowing->sub_regions_run : 0,
              c.narrowing ? c.narrowing->steps.front().covers.size() : c.covers.size(), c.covers.size(), plain_ms,
              locate_ms / plain_ms, undrilled_ms, undrilled_ms / plain_ms, locate_cpu / plain_cpu,
              undrilled_cpu / plain_cpu);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("DRILL_TORCH_ONLY")) {
    for (int i = 1; i < argc; ++i)
      for (int where : {0, 1, 2}) InChild([&] { TorchCost(argv[i], where); });
    return 0;
  }
  if (const char* only = std::getenv("DRILL_BLOCKS")) {  // one size, both plantings
    for (bool last : {false, true}) InChild([=] { SessionsVsSize(std::atoi(only), last); });
    return 0;
  }
  for (int blocks : {2, 4, 8, 16, 32, 48})
    for (bool last : {false, true}) InChild([=] { SessionsVsSize(blocks, last); });
  for (int i = 1; i < argc; ++i)
    for (int where : {0, 1, 2}) InChild([&] { TorchCost(argv[i], where); });
  return 0;
}
