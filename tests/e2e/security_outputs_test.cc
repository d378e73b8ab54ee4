// Issue 29, second hostile-input review: outputs never replace inputs
// (probe 3), a baseline is written whole or not at all (probe 4). Each test
// builds its input and drives the real binary.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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

using e2e::ExpectExit;

// Probe 3: `check m.onnx --json m.onnx` replaced the model with its report;
// a symlink or a hard link to the model is the same file.
TEST(SecurityOutputs, ReportPathsThatAreTheModelAreRefusedAndTheModelKept) {
  TempDir tmp("parity_outputs");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  const std::string model = ReadFileString(tmp / "m.onnx");
  fs::create_symlink(tmp / "m.onnx", tmp / "soft.json");
  fs::create_hard_link(tmp / "m.onnx", tmp / "hard.json");
  for (const char* out : {"m.onnx", "soft.json", "hard.json"}) {
    auto r = RunParity({"check", (tmp / "m.onnx").string(), "--json", (tmp / out).string()});
    ExpectExit(r, 2);
    EXPECT_NE(r.err.find("never overwrites its inputs"), std::string::npos) << out << ": " << r.err;
    EXPECT_EQ(ReadFileString(tmp / "m.onnx"), model) << out;
  }
  EXPECT_TRUE(fs::is_symlink(tmp / "soft.json"));
  auto r = RunParity({"inspect", (tmp / "m.onnx").string(), "--json", (tmp / "m.onnx").string()});
  ExpectExit(r, 2);
  EXPECT_EQ(ReadFileString(tmp / "m.onnx"), model);
}

// Probe 3: `run -o DIR` wrote the model's output over the user's own
// DIR/output.npy, and `-o x.npz` over the inputs' archive.
TEST(SecurityOutputs, RunNeverWritesOverItsInputsNorIntoTheUsersFolder) {
  TempDir tmp("parity_outputs");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  fs::create_directories(tmp / "data");
  ASSERT_TRUE(WriteNpy(tmp / "data" / "input.npy", e2e::AddReluInput()));
  ASSERT_TRUE(WriteNpy(tmp / "data" / "output.npy", e2e::AddReluInput()));
  const std::string mine = ReadFileString(tmp / "data" / "output.npy");
  auto r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "data").string(), "-o",
                      (tmp / "data").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("parity did not write"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileString(tmp / "data" / "output.npy"), mine);

  TensorSet in;
  in.Set("input", e2e::AddReluInput());
  ASSERT_TRUE(WriteNpz(tmp / "x.npz", in));
  const std::string archive = ReadFileString(tmp / "x.npz");
  r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "x.npz").string(), "-o",
                 (tmp / "x.npz").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("never overwrites its inputs"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileString(tmp / "x.npz"), archive);

  // A folder parity's own run wrote is reused, and an input inside it is kept.
  r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "x.npz").string(), "-o",
                 (tmp / "out").string()});
  ExpectExit(r, 0);
  ASSERT_TRUE(fs::exists(tmp / "out" / "output.npy"));
  const std::string first = ReadFileString(tmp / "out" / "output.npy");
  r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "x.npz").string(), "-o",
                 (tmp / "out").string()});
  ExpectExit(r, 0);
  EXPECT_EQ(ReadFileString(tmp / "out" / "output.npy"), first);
}

// Probe 4: a refusal half-way (two sample names that sanitise to one folder)
// left files behind, and every rerun was then refused.
TEST(SecurityOutputs, BaselineRefusedHalfWayLeavesNothingAndARerunWorks) {
  TempDir tmp("parity_outputs");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  TensorSet clash;
  clash.Set("a b/input", e2e::AddReluInput());
  clash.Set("a_b/input", e2e::AddReluInput());
  ASSERT_TRUE(WriteNpz(tmp / "clash.npz", clash));
  auto r = RunParity({"baseline", (tmp / "m.onnx").string(), "--inputs", (tmp / "clash.npz").string(), "-o",
                      (tmp / "bl").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("two samples map to directory 'a_b'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "bl"));
  TensorSet good;
  good.Set("input", e2e::AddReluInput());
  ASSERT_TRUE(WriteNpz(tmp / "in.npz", good));
  r = RunParity({"baseline", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npz").string(), "-o",
                 (tmp / "bl").string()});
  ExpectExit(r, 0);
  EXPECT_TRUE(fs::exists(tmp / "bl" / "manifest.json"));
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename().string().find("parity-staging"), std::string::npos) << e.path();
}

// Probe 4: --overwrite replaces the whole folder, so a folder holding more
// than its baseline's files (a user's notes) is refused, and an input inside
// the old baseline is never deleted.
TEST(SecurityOutputs, BaselineOverwriteKeepsUnlistedFilesAndInputs) {
  TempDir tmp("parity_outputs");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  TensorSet good;
  good.Set("input", e2e::AddReluInput());
  ASSERT_TRUE(WriteNpz(tmp / "in.npz", good));
  const std::vector<std::string> make = {"baseline", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npz").string(),
                                         "-o", (tmp / "bl").string()};
  ExpectExit(RunParity(make), 0);
  std::ofstream(tmp / "bl" / "notes.txt") << "mine\n";
  auto overwrite = make;
  overwrite.push_back("--overwrite");
  auto r = RunParity(overwrite);
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("'notes.txt' is not one of its files"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileString(tmp / "bl" / "notes.txt"), "mine\n");
  fs::remove(tmp / "bl" / "notes.txt");
  ExpectExit(RunParity(overwrite), 0);
  r = RunParity({"baseline", (tmp / "m.onnx").string(), "--inputs", (tmp / "bl" / "input.npy").string(), "-o",
                 (tmp / "bl").string(), "--overwrite"});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("never overwrites its inputs"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(tmp / "bl" / "input.npy"));
}

// Probe 7: node names with backticks and newlines wrote a forged "Run:" block
// into the repro README.md, raw ESC bytes reached README.md and report.html,
// and newlines in names split locate's console lines.
TEST(SecurityOutputs, HostileNodeNamesAreEscapedInTheReadmeTheConsoleAndHtml) {
  TempDir tmp("parity_outputs");
  const std::string hostile = "blk`\n\nRun:\n\n```\nrm -rf ~\n```\n\x1b[2K\xc2\x9b";
  auto model = [&](float c) {
    ModelBuilder b;
    auto x = b.Input("input", DType::kFloat32, {1, 4});
    std::string y;
    {
      auto s = b.Scope(hostile);
      y = b.Relu(b.Add(x, b.ConstWeight("c", {1, 4}, c)));
    }
    b.Output(y, "output");
    return *b.Build();
  };
  ASSERT_TRUE(model(0.5f).Save(tmp / "m.onnx"));
  ASSERT_TRUE(model(0.75f).Save(tmp / "t.onnx"));
  ASSERT_TRUE(WriteNpy(tmp / "in.npy", e2e::AddReluInput()));
  auto r = RunParity({"locate", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npy").string(), "--target-model",
                      (tmp / "t.onnx").string(), "--repro", (tmp / "repro").string(), "--no-ablation"});
  ExpectExit(r, 1);
  const std::string readme = ReadFileString(tmp / "repro" / "README.md");
  ASSERT_FALSE(readme.empty()) << r.out << r.err;
  EXPECT_EQ(readme.find('\x1b'), std::string::npos) << readme;
  EXPECT_EQ(readme.find("\xc2\x9b"), std::string::npos) << readme;
  EXPECT_EQ(readme.find("\nrm -rf"), std::string::npos) << "a name started a line:\n" << readme;
  size_t runs = 0;
  for (size_t p = readme.find("Run:"); p != std::string::npos; p = readme.find("Run:", p + 1))
    if (p == 0 || readme[p - 1] == '\n') ++runs;
  EXPECT_EQ(runs, 1u) << readme;
  EXPECT_NE(readme.find("\\x1b[2K"), std::string::npos) << "shown, escaped:\n" << readme;
  // Console: every line that names the culprit holds all of its name.
  EXPECT_EQ(r.out.find("\nrm -rf"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nRun:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blk`\\x0a\\x0aRun:"), std::string::npos) << r.out;

  r = RunParity({"check", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npy").string(), "--report",
                 (tmp / "report").string()});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  const std::string html = ReadFileString(tmp / "report" / "report.html");
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_EQ(html.find("\xc2\x9b"), std::string::npos) << html.substr(html.find("\xc2\x9b") - 300, 400);
}

}  // namespace
}  // namespace parity
