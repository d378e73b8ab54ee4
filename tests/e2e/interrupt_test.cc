// Interrupted runs (issue 8): SIGINT/SIGTERM mid-run exit 130/143 with one
// line and leave no partial file: `parity run`'s output and `parity check`'s
// report directory are each whole or absent.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/npz.h"
#include "core/tensor.h"
#include "engine/run/tensor_source.h"
#include "e2e_models.h"
#include "e2e_util.h"
#include "onnx/builder.h"
#include "onnx/model.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

// --- interruption

// A model that keeps ORT busy for seconds: 60 MatMuls of [512, 512] by one
// shared weight, run single-threaded on 20 samples (about 8 s of CPU; the
// test interrupts it long before).
fs::path SlowModel(const fs::path& dir, fs::path* inputs) {
  return e2e::SlowMatMulModel(dir, 512, 60, 20, inputs);
}

// Waits until `pid` catches `sig` (its handler is installed: /proc's SigCgt),
// so the signal tests parity's handler, not the default action before main().
bool WaitForHandler(pid_t pid, int sig) {
  for (int i = 0; i < 2000; ++i) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
      if (line.starts_with("SigCgt:") && (std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::vector<std::string> Leftovers(const fs::path& dir, const std::string& stem) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with(stem)) out.push_back(e.path().filename().string());
  return out;
}

// Starts parity with `args`, sends `sig` `delay_ms` after its handler is
// installed, and returns its exit code (the test fails if a signal killed it).
int SpawnAndInterrupt(const std::vector<std::string>& args, int sig, int delay_ms, std::string* err) {
  e2e::Child c = e2e::StartParity(args);
  EXPECT_GT(c.pid, 0);
  if (c.pid <= 0) return -1;
  EXPECT_TRUE(WaitForHandler(c.pid, sig));
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  kill(c.pid, sig);
  const e2e::ProcessResult r = e2e::Finish(c);
  *err = r.err;
  EXPECT_EQ(r.term_signal, 0) << "killed by signal " << r.term_signal;
  return r.term_signal == 0 ? r.exit_code : -1;
}

void InterruptRun(int sig, const char* name, int expected_exit) {
  const fs::path dir = e2e::MakeTempDir("parity-interrupt");
  fs::path inputs;
  const fs::path model = SlowModel(dir, &inputs);
  const fs::path out = dir / "out.npz";
  // Interrupt at several points; each time the output is complete or absent.
  int interrupted = 0;
  for (int delay_ms : {0, 300, 1000}) {
    fs::remove(out);
    std::string err;
    int code = -1;
    ASSERT_NO_FATAL_FAILURE(code = SpawnAndInterrupt(
        {"run", model.string(), "--inputs", inputs.string(), "-o", out.string(), "--threads", "1"}, sig, delay_ms, &err));
    if (code == 0) {
      // It finished before the signal: the file must then be whole.
      auto set = ReadNpz(out);
      EXPECT_TRUE(set) << set.error().message();
    } else {
      ++interrupted;
      EXPECT_EQ(code, expected_exit) << err;
      EXPECT_EQ(e2e::Lines(err).back(), std::string("parity: interrupted (") + name + "); no partial files left");
      EXPECT_FALSE(fs::exists(out)) << "a partial output after " << delay_ms << " ms";
    }
    EXPECT_EQ(Leftovers(dir, "out.npz.tmp"), std::vector<std::string>{});
  }
  EXPECT_GT(interrupted, 0) << "the run was never interrupted: make the slow model slower";
  fs::remove_all(dir);
}

TEST(Interrupt, SigintLeavesNoPartialOutput) { InterruptRun(SIGINT, "SIGINT", 130); }
TEST(Interrupt, SigtermLeavesNoPartialOutput) { InterruptRun(SIGTERM, "SIGTERM", 143); }

// `parity check --report DIR` interrupted mid-run: the report files are all
// there and whole, or none is.
void InterruptCheck(int sig, const char* name, int expected_exit) {
  const fs::path dir = e2e::MakeTempDir("parity-interrupt-check");
  fs::path inputs;
  const fs::path model = SlowModel(dir, &inputs);
  const fs::path report = dir / "report";
  int interrupted = 0;
  for (int delay_ms : {0, 500, 1500}) {
    fs::remove_all(report);
    std::string err;
    int code = -1;
    ASSERT_NO_FATAL_FAILURE(code = SpawnAndInterrupt({"check", model.string(), "--inputs", inputs.string(), "--report",
                                                      report.string(), "--threads", "1", "--runs", "3"},
                                                     sig, delay_ms, &err));
    const bool any = fs::exists(report / "report.json") || fs::exists(report / "report.html") ||
                     fs::exists(report / "junit.xml");
    if (code == 0 || code == 1) {
      // It finished before the signal: every report is there and whole.
      std::ifstream in(report / "report.json");
      EXPECT_FALSE(nlohmann::json::parse(in, nullptr, false).is_discarded());
      EXPECT_TRUE(fs::exists(report / "report.html") && fs::exists(report / "junit.xml"));
    } else {
      ++interrupted;
      EXPECT_EQ(code, expected_exit) << err;
      EXPECT_EQ(e2e::Lines(err).back(), std::string("parity: interrupted (") + name + "); no partial files left");
      EXPECT_FALSE(any) << "a partial report after " << delay_ms << " ms";
    }
    if (fs::exists(report)) {
      for (const auto& e : fs::directory_iterator(report)) {
        EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
      }
    }
  }
  EXPECT_GT(interrupted, 0) << "check was never interrupted: make the slow model slower";
  fs::remove_all(dir);
}

TEST(Interrupt, SigintDuringCheckLeavesNoPartialReport) { InterruptCheck(SIGINT, "SIGINT", 130); }

// Issue 29, probe 4: `baseline` interrupted left 5-256 files and no manifest,
// and every rerun was then refused. It now writes into a staging folder
// beside -o DIR: interrupted, DIR is absent (or, with --overwrite, the old
// baseline is there untouched) and no staging folder is left.
void InterruptBaseline(int sig, const char* name, int expected_exit) {
  const fs::path dir = e2e::MakeTempDir("parity-interrupt-baseline");
  fs::path inputs;
  const fs::path model = SlowModel(dir, &inputs);
  const fs::path bl = dir / "bl";
  int interrupted = 0;
  for (int delay_ms : {0, 400, 1200}) {
    std::string err;
    int code = -1;
    ASSERT_NO_FATAL_FAILURE(code = SpawnAndInterrupt({"baseline", model.string(), "--inputs", inputs.string(), "-o",
                                                      bl.string(), "--threads", "1"},
                                                     sig, delay_ms, &err));
    ASSERT_NE(code, 0) << "the baseline finished before the signal: make the slow model slower";
    ++interrupted;
    EXPECT_EQ(code, expected_exit) << err;
    EXPECT_EQ(e2e::Lines(err).back(), std::string("parity: interrupted (") + name + "); no partial files left");
    EXPECT_FALSE(fs::exists(bl)) << "a partial baseline after " << delay_ms << " ms";
    EXPECT_EQ(Leftovers(dir, ".bl."), std::vector<std::string>{}) << "a staging folder after " << delay_ms << " ms";
  }
  // An old baseline replaced with --overwrite and interrupted is kept whole.
  ModelBuilder b;
  b.Output(b.Relu(b.Input("x", DType::kFloat32, Shape{1, 4})), "y");
  const fs::path small = dir / "small.onnx";
  ASSERT_TRUE(b.Build()->Save(small));
  TensorSet one;
  one.Set("x", *Tensor::Create(DType::kFloat32, {1, 4}));
  ASSERT_TRUE(SaveTensors(dir / "small.npz", one));
  auto made = e2e::RunParity({"baseline", small.string(), "--inputs", (dir / "small.npz").string(), "-o", bl.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::ifstream in(bl / "manifest.json");
  const std::string manifest{std::istreambuf_iterator<char>(in), {}};
  std::string err;
  int code = -1;
  ASSERT_NO_FATAL_FAILURE(code = SpawnAndInterrupt({"baseline", model.string(), "--inputs", inputs.string(), "-o",
                                                    bl.string(), "--threads", "1", "--overwrite"},
                                                   sig, 600, &err));
  EXPECT_EQ(code, expected_exit) << err;
  std::ifstream again(bl / "manifest.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(again), {}), manifest) << "the old baseline was touched";
  EXPECT_TRUE(fs::exists(bl / "output.npy"));
  EXPECT_EQ(Leftovers(dir, ".bl."), std::vector<std::string>{});
  auto verify = e2e::RunParity({"baseline", "verify", bl.string(), small.string()});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  fs::remove_all(dir);
}

TEST(Interrupt, SigintDuringBaselineLeavesNoPartialBaseline) { InterruptBaseline(SIGINT, "SIGINT", 130); }
TEST(Interrupt, SigtermDuringBaselineLeavesTheOldBaselineWhole) { InterruptBaseline(SIGTERM, "SIGTERM", 143); }

}  // namespace
}  // namespace parity
