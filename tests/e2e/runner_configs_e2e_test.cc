// A config on another ORT release (its "ort_library") where bench and the
// dataset's target take their sessions from Runners (issue 55 item 1,
// engine/runner/runner.h): bench times sessions in its own process, so such
// a config is one line and exit 2 before anything runs, while the same
// release chosen by --ort-library benches; the dataset's target runs on its
// config's release in a child runner (the reference already did), and a
// target library that does not exist is the target's one-line error. The
// venv's onnxruntime wheel is the other release; tests that need it skip
// with a reason where it is absent.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/npz.h"
#include "e2e_models.h"
#include "e2e_util.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

using e2e::WriteText;

std::string ConfigOn(const fs::path& library) {
  return fmt::format(R"({{"opt": "all", "ort_library": "{}"}})", library.string());
}

class RunnerConfigs : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(e2e::AddReluModel().Save(Path("m.onnx")).has_value()); }
  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }

  // `parity bench m.onnx --configs disable --config CONFIG ...` on the bundled ORT.
  e2e::ProcessResult Bench(const std::string& config, const std::vector<std::string>& more = {}) const {
    std::vector<std::string> argv = {"env",      "-u",     "PARITY_ORT_LIBRARY", PARITY_BINARY, "bench",
                                     Path("m.onnx"), "--runs", "2", "--warmup", "0", "--configs", "disable",
                                     "--config", config};
    argv.insert(argv.end(), more.begin(), more.end());
    return e2e::RunProgram(argv);
  }

  // One dataset-worker serving one sample of m.onnx, its target under
  // `target_config`, its reference the bundled ORT's `disable`.
  e2e::ProcessResult DatasetWorker(const std::string& target_config) const {
    TensorSet s;
    EXPECT_TRUE(s.Add("input", e2e::AddReluInput()));
    EXPECT_TRUE(WriteNpz(Path("s0.npz"), s));
    WriteText(Path("ref.json"), "{}");
    WriteText(Path("tol.json"), "{}");
    std::string hex;
    for (unsigned char c : Path("s0.npz")) hex += fmt::format("{:02x}", c);
    const std::string worker = fmt::format(
        "printf '{{\"index\":0,\"path_hex\":\"{}\"}}\\n' | env -u PARITY_ORT_LIBRARY {} dataset-worker {} "
        "--target-config {} --reference-config {} --tolerance-policy {}",
        hex, PARITY_BINARY, Path("m.onnx"), target_config, Path("ref.json"), Path("tol.json"));
    return e2e::RunProgram({"sh", "-c", worker});
  }

  e2e::TempDir dir_{"parity_runner_configs"};
};

TEST_F(RunnerConfigs, BenchRefusesAConfigOnAnotherReleaseAndBenchesItUnderOrtLibrary) {
  const fs::path wheel = e2e::WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv";
  WriteText(Path("wheel.json"), ConfigOn(wheel));
  auto refused = Bench(Path("wheel.json"));
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  ASSERT_EQ(e2e::Lines(refused.err).size(), 1u) << refused.err;
  EXPECT_NE(refused.err.find("config 'wheel (all)' runs on ONNX Runtime"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--ort-library " + wheel.string()), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out.find("disable"), std::string::npos) << "nothing measured first: " << refused.out;

  // The healthy twin: that release is the process's, so both configs bench.
  auto benched = Bench(Path("wheel.json"), {"--ort-library", wheel.string()});
  EXPECT_EQ(benched.exit_code, 0) << benched.out << benched.err;
  EXPECT_NE(benched.out.find("wheel (all)"), std::string::npos) << benched.out;
  EXPECT_EQ(benched.out.find("failed"), std::string::npos) << benched.out;
}

TEST_F(RunnerConfigs, BenchSaysOneLineForAConfigsLibraryThatDoesNotExist) {
  WriteText(Path("nope.json"), ConfigOn(Path("no/libonnxruntime.so")));
  auto r = Bench(Path("nope.json"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  ASSERT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("bench: config 'nope (all)': runtime library"), std::string::npos) << r.err;
}

TEST_F(RunnerConfigs, TheDatasetsTargetRunsOnItsConfigsRelease) {
  const fs::path wheel = e2e::WheelOrt();
  if (wheel.empty()) GTEST_SKIP() << "no onnxruntime wheel in the venv";
  WriteText(Path("target.json"), ConfigOn(wheel));
  auto r = DatasetWorker(Path("target.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto lines = e2e::Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0], "O\t1");
  EXPECT_TRUE(lines[1].starts_with("R\t0\t")) << r.out;  // the sample judged, not a bad one
  EXPECT_EQ(lines[2], "E\t0");
}

TEST_F(RunnerConfigs, ADatasetTargetOnALibraryThatDoesNotExistIsTheTargetsOneLine) {
  WriteText(Path("nope.json"), ConfigOn(Path("no/libonnxruntime.so")));
  auto r = DatasetWorker(Path("nope.json"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  ASSERT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("the target: runtime library"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("R\t"), std::string::npos) << "no sample judged on the process's ORT instead: " << r.out;
}

}  // namespace
}  // namespace parity
