// Issue 29, folders written whole or not at all (docs/security.md, promise
// 2): `check --report DIR`, `locate --repro DIR`, `demo --out DIR` and `run -o
// DIR` write
// into a staging folder beside DIR and rename it into place once complete. A
// refusal, a failure half-way or an interrupt leaves an earlier DIR exactly as
// it was and no staging folder behind. Each test drives the real binary.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "core/npy.h"
#include "core/npz.h"
#include "core/io_test_util.h"
#include "e2e_util.h"
#include "onnx/builder.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using e2e::RunParity;
using e2e::TempDir;

using testing::ReadFileString;

// Every regular file under `dir` (relative name -> bytes).
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().lexically_relative(dir).generic_string()] = ReadFileString(e.path());
  return out;
}

// Names of staging folders left in `dir`.
std::vector<std::string> Staging(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find("parity-staging") != std::string::npos)
      out.push_back(e.path().filename().string());
  return out;
}

// check --report: complete after success; an earlier report whose folder
// cannot be replaced whole (a user's file in it, a folder where a report file
// goes) is kept byte for byte, refused with a message, and nothing is staged.
TEST(SecurityStaged, CheckReportIsWholeAndAnEarlierReportIsKeptOnFailure) {
  TempDir tmp("parity_staged");
  ASSERT_TRUE(e2e::AddReluModel(0.5f).Save(tmp / "m.onnx"));
  const std::vector<std::string> check = {"check", (tmp / "m.onnx").string(), "--runs", "1", "--report",
                                          (tmp / "report").string()};
  auto r = RunParity(check);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  for (const char* f : {".parity-output", "report.json", "report.html", "junit.xml"})
    EXPECT_TRUE(fs::is_regular_file(tmp / "report" / f)) << f;
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});
  // A rerun replaces the earlier report whole.
  r = RunParity(check);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  EXPECT_EQ(Snapshot(tmp / "report").size(), 4u);

  std::ofstream(tmp / "report" / "notes.txt") << "mine\n";
  auto before = Snapshot(tmp / "report");
  r = RunParity(check);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("'notes.txt' is not a file parity writes there"), std::string::npos) << r.err;
  EXPECT_EQ(Snapshot(tmp / "report"), before);
  fs::remove(tmp / "report" / "notes.txt");

  // report.html a folder: the old code replaced report.json, failed on
  // report.html and then removed the new report.json, leaving a half report.
  fs::remove(tmp / "report" / "report.html");
  fs::create_directory(tmp / "report" / "report.html");
  before = Snapshot(tmp / "report");
  r = RunParity(check);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(Snapshot(tmp / "report"), before);
  EXPECT_TRUE(fs::is_directory(tmp / "report" / "report.html"));
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});

  // A symlink as DIR would be replaced by the new folder, not written through.
  fs::remove_all(tmp / "report" / "report.html");
  fs::create_directory_symlink(tmp / "report", tmp / "link");
  before = Snapshot(tmp / "report");
  r = RunParity({"check", (tmp / "m.onnx").string(), "--runs", "1", "--report", (tmp / "link").string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("is a symbolic link"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_symlink(tmp / "link"));
  EXPECT_EQ(Snapshot(tmp / "report"), before);
}

// locate --repro: complete after success; a second locate that fails half-way
// (one of the old repro's files is, through a hard link, its own input) left
// the old code's repro with a new model.onnx beside the old expected.npz. Now
// the earlier repro is kept byte for byte and nothing is staged.
TEST(SecurityStaged, LocateReproIsWholeAndAnEarlierReproIsKeptOnFailure) {
  TempDir tmp("parity_staged");
  ASSERT_TRUE(e2e::AddReluModel(0.5f).Save(tmp / "m.onnx"));
  ASSERT_TRUE(e2e::AddReluModel(0.75f).Save(tmp / "t.onnx"));
  ASSERT_TRUE(e2e::AddReluModel(0.25f).Save(tmp / "m2.onnx"));
  TensorSet in;
  in.Set("input", e2e::AddReluInput());
  ASSERT_TRUE(WriteNpz(tmp / "in.npz", in));
  auto locate = [&](const char* model) {
    return RunParity({"locate", (tmp / model).string(), "--inputs", (tmp / "in.npz").string(), "--target-model",
                      (tmp / "t.onnx").string(), "--repro", (tmp / "repro").string(), "--no-ablation"});
  };
  auto r = locate("m.onnx");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const char* f : {".parity-output", "model.onnx", "target_model.onnx", "inputs.npz", "expected.npz",
                        "actual.npz", "target.json", "README.md"})
    EXPECT_TRUE(fs::is_regular_file(tmp / "repro" / f)) << f;
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});

  fs::remove(tmp / "repro" / "expected.npz");
  fs::create_hard_link(tmp / "in.npz", tmp / "repro" / "expected.npz");
  const auto before = Snapshot(tmp / "repro");
  r = locate("m2.onnx");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("never overwrites its inputs"), std::string::npos) << r.err;
  EXPECT_EQ(Snapshot(tmp / "repro"), before) << "the earlier repro was touched";
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});
  // Once the input is moved out of the way, the repro is replaced whole.
  fs::remove(tmp / "repro" / "expected.npz");
  r = locate("m2.onnx");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(ReadFileString(tmp / "repro" / "model.onnx") != before.at("model.onnx") ||
              ReadFileString(tmp / "repro" / "inputs.npz") != before.at("inputs.npz"))
      << "the repro was not rewritten";
  EXPECT_TRUE(fs::is_regular_file(tmp / "repro" / "expected.npz"));
}

// demo --out: complete after success; SIGTERM after its first case's report
// is written (the old code had by then replaced the earlier demo's models and
// that report) exits 143, leaves the earlier demo byte for byte and no staging.
TEST(SecurityStaged, DemoInterruptedLeavesTheEarlierDemoWhole) {
  TempDir tmp("parity_staged");
  const fs::path out = tmp / "demo";
  auto r = RunParity({"demo", "--out", out.string(), "--runs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto before = Snapshot(out);
  for (const char* f : {".parity-output", "models/conv_bn_relu.onnx", "models/residual_cnn_planted.onnx",
                        "conv_bn_relu/report.json", "planted_fault/report.html", "planted_fault/junit.xml"})
    EXPECT_TRUE(before.contains(f)) << f;
  // The reports name the models where they are, not where they were staged.
  for (const auto& [name, bytes] : before) EXPECT_EQ(bytes.find("parity-staging"), std::string::npos) << name;
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});

  e2e::Child c = e2e::StartParity({"demo", "--out", out.string(), "--runs", "3000"});
  ASSERT_GT(c.pid, 0);
  bool first_case_written = false;
  for (int i = 0; i < 12000 && !first_case_written; ++i) {
    for (const auto& name : Staging(tmp.path()))
      first_case_written = first_case_written || fs::exists(tmp / name / "conv_bn_relu" / "report.json");
    if (!first_case_written) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(c.pid, SIGTERM);
  const e2e::ProcessResult done = e2e::Finish(c);
  ASSERT_TRUE(first_case_written) << "the demo never wrote its first report: " << done.out << done.err;
  EXPECT_EQ(done.term_signal, 0);
  EXPECT_EQ(done.exit_code, 143) << done.out << done.err;
  EXPECT_EQ(e2e::Lines(done.err).back(), "parity: interrupted (SIGTERM); no partial files left");
  EXPECT_EQ(Snapshot(out), before) << "the earlier demo was touched";
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});
}

// run -o DIR: the old code claimed DIR (marker) and wrote one .npy after the
// other into it. A refusal after the runs (outputs of several samples) left a
// new DIR behind; a failure between two files (a folder where the second goes)
// left the first one replaced by the new run's; a user's file in an earlier
// run's folder was kept among the new outputs. Now DIR is staged beside and
// put in place whole, or kept byte for byte.
// y = Relu(x + c) and the sum itself as a second output "sum" (written first).
Model TwoOutputs(float c) {
  ModelBuilder b;
  auto x = b.Input("input", DType::kFloat32, {1, 4});
  auto sum = b.Add(x, b.ConstWeight("c", {1, 4}, c));
  b.Output(b.Identity(sum), "sum");
  b.Output(b.Relu(sum), "output");
  auto model = b.Build();
  EXPECT_TRUE(model) << model.error().message();
  return model ? std::move(*model) : Model();
}

TEST(SecurityStaged, RunOutputFolderIsWholeAndAnEarlierOneIsKeptOnFailure) {
  TempDir tmp("parity_staged");
  ASSERT_TRUE(TwoOutputs(0.5f).Save(tmp / "m.onnx"));
  ASSERT_TRUE(TwoOutputs(0.25f).Save(tmp / "m2.onnx"));
  TensorSet in;
  in.Set("input", e2e::AddReluInput());
  ASSERT_TRUE(WriteNpz(tmp / "in.npz", in));
  TensorSet two;
  two.Set("a/input", e2e::AddReluInput());
  two.Set("b/input", e2e::AddReluInput());
  ASSERT_TRUE(WriteNpz(tmp / "two.npz", two));
  const fs::path out = tmp / "out";
  auto run = [&](const char* model, const char* inputs, const fs::path& dir) {
    return RunParity({"run", (tmp / model).string(), "--inputs", (tmp / inputs).string(), "-o", dir.string()});
  };

  // Several samples cannot go into one folder of NAME.npy: refused, nothing made.
  auto r = run("m.onnx", "two.npz", tmp / "new");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("FILE.npz"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "new"));
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});

  r = run("m.onnx", "in.npz", out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto before = Snapshot(out);
  ASSERT_EQ(before.size(), 3u) << "the marker and the two outputs";
  EXPECT_EQ(before.at(".parity-output"), "parity.run\n");
  EXPECT_TRUE(before.contains("output.npy"));
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});

  // A folder where the output goes: refused before any file is written.
  fs::remove(out / "output.npy");
  fs::create_directory(out / "output.npy");
  before = Snapshot(out);
  r = run("m2.onnx", "in.npz", out);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("'output.npy' is not a file parity writes there"), std::string::npos) << r.err;
  EXPECT_EQ(Snapshot(out), before) << "the earlier run's folder was touched";
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});
  fs::remove(out / "output.npy");

  // A user's file among an earlier run's outputs is refused, named, and kept.
  { std::ofstream(out / "notes.txt") << "mine"; }
  before = Snapshot(out);
  r = run("m2.onnx", "in.npz", out);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("'notes.txt'"), std::string::npos) << r.err;
  EXPECT_EQ(Snapshot(out), before);
  fs::remove(out / "notes.txt");

  // One of the folder's files as this run's input: refused, the file kept.
  ASSERT_TRUE(WriteNpy(out / "output.npy", e2e::AddReluInput()));
  before = Snapshot(out);
  r = RunParity({"run", (tmp / "m2.onnx").string(), "--inputs", (out / "output.npy").string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("never overwrites its inputs"), std::string::npos) << r.err;
  EXPECT_EQ(Snapshot(out), before);

  // Otherwise the earlier run's folder is replaced whole by the new outputs.
  r = run("m2.onnx", "in.npz", out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto after = Snapshot(out);
  EXPECT_EQ(after.size(), 3u);
  EXPECT_NE(after.at("output.npy"), before.at("output.npy"));
  EXPECT_EQ(Staging(tmp.path()), std::vector<std::string>{});
}

// run --all-tensors -o DIR on a torch export: its tensor names hold '/'
// ("/layer1/conv/Conv_output_0"), which the old code refused as file names
// (exit 2, every torch model). Now each name is percent-encoded into its
// file name, and a folder with run's marker is read back under the real
// names: `compare` of the folder with the same run's .npz matches every name.
TEST(SecurityStaged, RunOutputFolderHoldsTensorNamesWithSlashes) {
  TempDir tmp("parity_staged");
  ModelBuilder b;
  auto x = b.Input("input", DType::kFloat32, {1, 4});
  auto sum = b.Add(x, b.ConstWeight("c", {1, 4}, 0.5f));
  b.Output(b.Identity(sum), "/layer1/add/Add_output_0");
  b.Output(b.Relu(sum), "50%/out");
  auto model = b.Build();
  ASSERT_TRUE(model) << model.error().message();
  ASSERT_TRUE(model->Save(tmp / "m.onnx"));
  TensorSet in;
  in.Set("input", e2e::AddReluInput());
  ASSERT_TRUE(WriteNpz(tmp / "in.npz", in));

  for (const char* flag : {"--all-tensors", ""}) {
    const fs::path out = tmp / (std::string("out") + (*flag ? "_all" : ""));
    std::vector<std::string> args = {"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npz").string(),
                                      "-o", out.string()};
    if (*flag) args.push_back(flag);
    auto r = RunParity(args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(fs::is_regular_file(out / "%2Flayer1%2Fadd%2FAdd_output_0.npy"));
    EXPECT_TRUE(fs::is_regular_file(out / "50%25%2Fout.npy"));
    r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npz").string(), "-o",
                   (tmp / "same.npz").string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    // Every output of the .npz has its tensor in the folder, by name.
    r = RunParity({"compare", (tmp / "same.npz").string(), out.string(), "--allow-extra"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("/layer1/add/Add_output_0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("50%/out"), std::string::npos) << r.out;
    fs::remove(tmp / "same.npz");
  }
}

}  // namespace
}  // namespace parity
