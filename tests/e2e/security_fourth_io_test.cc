// Issue 56, fourth hostile-input review: what parity generates, where it
// writes, and what it prints for people to run. Class 5: every dynamic dim
// defaulted to 32 whatever the rank, so a 150-byte rank-7 model made
// `inputs` and `check` allocate GBs. Class 9: outputs that clash (`--report
// R --model-explorer R/me`, `--json` inside the report folder) were found
// after the run, with half the outputs written. Class 10: an earlier report
// inside a glob dataset (`D/*`) broke every rerun. Class 11: a relative
// `--ep-library NAME=PATH` was resolved against ORT's folder. Class 14: the
// repro README's command put library paths unquoted (a space broke it,
// `$(...)` in a folder name ran when pasted). Class 15: a bad Ray Python was
// exit 3 after the dataset was listed. (Class 4, the long-name registry:
// src/core/short_name_test.cc.) Each test builds its input and drives the
// real binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/npz.h"
#include "e2e_util.h"
#include "onnx/builder.h"
#include "onnx/builtin_models.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using e2e::RunParity;
using e2e::RunProgram;
using e2e::TempDir;

using e2e::ExpectExit;

// Every path below `dir`, relative to it.
std::set<std::string> Tree(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// x [d0, ..., d6], every dim its own symbol, -> Relu -> y: 150 bytes or so.
Model Rank7AllDynamic() {
  ModelBuilder b;
  std::vector<Dim> dims;
  for (int i = 0; i < 7; ++i) dims.push_back(Dim::Symbolic("d" + std::to_string(i)));
  b.Output(b.Relu(b.Input("x", DType::kFloat32, dims)), "y");
  return *b.Build();
}

// Class 5: the defaulted dims of a rank-7 input are made smaller until it
// holds at most 2^20 elements (32 each was 2^30 elements, 4 GiB a sample);
// `inputs` and `check` say so and stay within a few hundred MB. A model of
// ordinary rank keeps its sizes; fixed dims that hold more than the byte
// bound are refused at once, naming the flag; the bounds can be raised.
TEST(SecurityFourth, ARank7AllDynamicModelGetsBoundedSamples) {
  TempDir tmp("parity_fourth");
  ASSERT_TRUE(Rank7AllDynamic().Save(tmp / "m.onnx"));
  auto inputs = RunParity({"inputs", (tmp / "m.onnx").string(), "-o", (tmp / "s.npz").string()});
  ExpectExit(inputs, 0);
  EXPECT_NE(inputs.out.find("sizes bounded: "), std::string::npos) << inputs.out;
  EXPECT_NE(inputs.out.find("--max-input-elements"), std::string::npos) << inputs.out;
  EXPECT_LT(fs::file_size(tmp / "s.npz"), uintmax_t{400} << 20);
  if (!e2e::kSanitized) {
    EXPECT_LT(inputs.peak_rss_bytes, int64_t{400} << 20) << e2e::kRssUnderAsan;
  }

  auto check = RunParity({"check", (tmp / "m.onnx").string(), "--runs", "1", "--warmup", "0", "--json",
                          (tmp / "r.json").string()});
  EXPECT_EQ(check.term_signal, 0) << check.err;
  EXPECT_TRUE(check.exit_code == 0 || check.exit_code == 1) << check.out << check.err;
  if (!e2e::kSanitized) {
    EXPECT_LT(check.peak_rss_bytes, int64_t{1024} << 20) << e2e::kRssUnderAsan;
  }
  const auto j = nlohmann::json::parse(ReadText(tmp / "r.json"));
  EXPECT_TRUE(j["generated_inputs"].contains("bounded")) << j["generated_inputs"].dump();

  // A lower bound, given: the typical sample's input holds at most 64 elements.
  auto small = RunParity({"inputs", (tmp / "m.onnx").string(), "--kind", "typical", "--max-input-elements", "64",
                          "-o", (tmp / "small.npz").string()});
  ExpectExit(small, 0);
  auto read = ReadNpz(tmp / "small.npz");
  ASSERT_TRUE(read.has_value()) << read.error().message();
  const Tensor* x = read->Find("typical/x");
  ASSERT_NE(x, nullptr);
  EXPECT_LE(x->size(), 64);

  // Ordinary rank: as before.
  ModelBuilder b;
  b.Output(b.Relu(b.Input("images", DType::kFloat32,
                          std::vector<Dim>{Dim::Symbolic("batch"), Dim::Known(3), Dim::Symbolic("h"),
                                           Dim::Symbolic("w")})),
           "y");
  ASSERT_TRUE(b.Build()->Save(tmp / "image.onnx"));
  auto image = RunParity({"inputs", (tmp / "image.onnx").string(), "-o", (tmp / "i.npz").string()});
  ExpectExit(image, 0);
  EXPECT_NE(image.out.find("[1, 3, 32, 32]"), std::string::npos) << image.out;
  EXPECT_EQ(image.out.find("sizes bounded"), std::string::npos) << image.out;

  // Fixed dims of 2^36 elements: refused before anything is allocated.
  ModelBuilder f;
  f.Output(f.Relu(f.Input("x", DType::kFloat32, Shape{65536, 65536, 16})), "y");
  ASSERT_TRUE(f.Build()->Save(tmp / "fixed.onnx"));
  auto fixed = RunParity({"inputs", (tmp / "fixed.onnx").string(), "-o", (tmp / "f.npz").string()});
  ExpectExit(fixed, 2);
  EXPECT_NE(fixed.err.find("--max-generated-mib"), std::string::npos) << fixed.err;
  EXPECT_EQ(e2e::Lines(fixed.err).size(), 1u) << fixed.err;
  EXPECT_FALSE(fs::exists(tmp / "f.npz"));
}

// Class 9: two outputs that are one path, or one inside the other, are
// refused before anything runs: exit 2, one line naming both, nothing
// written; the same command with outputs apart then runs.
TEST(SecurityFourth, OutputsThatNestOrCoincideAreRefusedBeforeAnythingRuns) {
  TempDir tmp("parity_fourth");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  TensorSet in;
  ASSERT_TRUE(in.Add("input", e2e::AddReluInput()));
  ASSERT_TRUE(WriteNpz(tmp / "in.npz", in));
  const std::string m = (tmp / "m.onnx").string(), r = (tmp / "R").string(), p = (tmp / "P").string();
  const std::set<std::string> before = Tree(tmp.path());
  const std::vector<std::vector<std::string>> clashes = {
      {"check", m, "--runs", "1", "--report", r, "--model-explorer", r},
      {"check", m, "--runs", "1", "--report", r + "/", "--model-explorer", r},
      {"check", m, "--runs", "1", "--report", r, "--model-explorer", r + "/me"},
      {"check", m, "--runs", "1", "--report", r, "--json", r + "/r.json"},
      {"check", m, "--runs", "1", "--model-explorer", r, "--json", r + "/x/../r.json"},
      {"check", m, "--runs", "1", "--json", r, "--report", r},
      {"locate", m, "--repro", p, "--json", p + "/l.json"},
      {"locate", m, "--repro", p, "--model-explorer", p + "/me"},
      {"baseline", m, "--inputs", (tmp / "in.npz").string(), "-o", p, "--json", p + "/b.json"},
  };
  for (const auto& args : clashes) {
    auto c = RunParity(args);
    ExpectExit(c, 2);
    EXPECT_EQ(e2e::Lines(c.err).size(), 1u) << c.err;
    EXPECT_TRUE(c.err.find("inside") != std::string::npos || c.err.find("one path") != std::string::npos) << c.err;
    EXPECT_EQ(Tree(tmp.path()), before) << "written before the refusal: " << args[0] << " " << c.err;
  }
  auto apart = RunParity({"check", m, "--runs", "1", "--report", r, "--model-explorer", (tmp / "me").string(),
                          "--json", (tmp / "r.json").string()});
  ExpectExit(apart, 0);
  EXPECT_TRUE(fs::exists(tmp / "R" / "report.json"));
  EXPECT_TRUE(fs::exists(tmp / "r.json"));
}

// Class 10: a report written inside the dataset is no entry of the glob
// `D/*` either, nor what lies in it (`D/*/*`): the rerun judges the samples.
TEST(SecurityFourth, ParitysOwnReportInsideAGlobDatasetIsNoEntry) {
  TempDir tmp("parity_fourth");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  // data/{a,b}.npz for `data/*`; nested/{s1,s2}/x.npz for `nested/*/*`.
  for (const fs::path name : {"data/a.npz", "data/b.npz", "nested/s1/x.npz", "nested/s2/x.npz"}) {
    fs::create_directories((tmp / name).parent_path());
    TensorSet s;
    ASSERT_TRUE(s.Add("input", e2e::AddReluInput()));
    ASSERT_TRUE(WriteNpz(tmp / name, s));
  }
  const std::string m = (tmp / "m.onnx").string();
  for (const std::string& dataset : {std::string("data/*"), std::string("nested/*/*")}) {
    const std::string rep = (tmp / fs::path(dataset).parent_path() / "rep").string(), glob = (tmp / dataset).string();
    ExpectExit(RunParity({"check", m, "--dataset", glob, "--report", rep}), 0);
    ASSERT_TRUE(fs::exists(fs::path(rep) / "report.json")) << dataset;
    auto again = RunParity({"check", m, "--dataset", glob, "--report", rep});
    ExpectExit(again, 0);
    EXPECT_EQ(again.err.find("rep"), std::string::npos) << dataset << ": " << again.err;
  }
}

// Class 11: `--ep-library NAME=relative/path.so` is the file below the
// working directory (ORT resolved it against its own library's folder).
TEST(SecurityFourth, ARelativeEpLibraryPathIsTheWorkingDirectorys) {
  TempDir tmp("parity_fourth");
  fs::create_directories(tmp / "plug");
  fs::copy_file(PARITY_PLANTED_FIXTURE, tmp / "plug" / "libplanted.so");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  const fs::path marker = tmp / "loaded";
  auto r = RunProgram({"env", "-C", tmp.path().string(), "-u", "PARITY_EP_LIBRARY", "PARITY_EP_DISCOVERY=0",
                       "PARITY_PLANTED_MARKER=" + marker.string(), PARITY_BINARY, "env", "--ep-library",
                       "planted=plug/libplanted.so"});
  EXPECT_TRUE(fs::exists(marker)) << "the library below the working directory was not loaded: " << r.err;
  // Being no EP, it is refused by ORT: bad input, one line, naming the absolute path.
  ExpectExit(r, 2);
  EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find((tmp / "plug" / "libplanted.so").string()), std::string::npos) << r.err;
}

// The README's "Run:" command.
std::string ReadmeCommand(const std::string& readme) {
  const size_t run = readme.find("Run:\n\n```\n");
  if (run == std::string::npos) return "";
  const size_t start = run + 10, end = readme.find("\n```", start);
  return readme.substr(start, end - start);
}

// Class 14: a repro of two runtimes whose library lies in a folder with a
// space and `$(...)` in its name: the README's command, pasted into a shell
// in the repro folder, runs the repro (exit 1) and nothing else.
TEST(SecurityFourth, TheReproCommandQuotesLibraryPathsForTheShell) {
  TempDir tmp("parity_fourth");
  auto env = RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "env", "--json",
                         (tmp / "env.json").string()});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  const fs::path bundled = nlohmann::json::parse(ReadText(tmp / "env.json"))["env"].value("ort_library", "");
  ASSERT_FALSE(bundled.empty());
  const fs::path odd = tmp / "ort $(touch PWNED) 'x'";
  fs::create_directories(odd);
  const fs::path lib = odd / bundled.filename();
  fs::copy_file(bundled, lib);
  ASSERT_TRUE(ConvBnRelu().Save(tmp / "m.onnx").has_value());
  auto r = RunProgram({"env", "-u", "PARITY_ORT_LIBRARY", PARITY_BINARY, "locate", (tmp / "m.onnx").string(),
                       "--reference", "all", "--opt", "all", "--disable-optimizer", "NchwcTransformer",
                       "--reference-ort-library", lib.string(), "--target-ort-library", lib.string(), "--atol", "0",
                       "--rtol", "0", "--mode", "fixed", "--repro", (tmp / "repro").string()});
  if (r.exit_code == 0) GTEST_SKIP() << "no fusion differs on this CPU: no repro to paste";
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string command = ReadmeCommand(ReadText(tmp / "repro" / "README.md"));
  ASSERT_NE(command.find("--target-ort-library"), std::string::npos) << command;
  fs::create_directories(tmp / "bin");
  fs::create_symlink(PARITY_BINARY, tmp / "bin" / "parity");
  auto pasted = RunProgram({"env", "-C", (tmp / "repro").string(), "-u", "PARITY_ORT_LIBRARY",
                            "PATH=" + (tmp / "bin").string() + ":/usr/bin:/bin", "bash", "-c", command});
  // It ran the repro on the library named (whether the region departs again
  // there is the repro's matter, not the command line's).
  EXPECT_TRUE(pasted.exit_code == 0 || pasted.exit_code == 1) << command << "\n" << pasted.out << pasted.err;
  EXPECT_NE(pasted.out.find("(" + lib.string() + ")"), std::string::npos) << command << "\n" << pasted.out;
  EXPECT_FALSE(fs::exists(tmp / "repro" / "PWNED")) << "the folder name ran: " << command;
  EXPECT_FALSE(fs::exists(tmp / "PWNED")) << command;
}

// Class 15: a Ray driver Python that is no Python (/bin/false) or lacks
// parity and ray: one line, exit 2, before the dataset is read or a report
// folder made.
TEST(SecurityFourth, ABadRayPythonIsOneLineAndExit2BeforeAnythingRuns) {
  TempDir tmp("parity_fourth");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  fs::create_directories(tmp / "data");
  TensorSet s;
  ASSERT_TRUE(s.Add("input", e2e::AddReluInput()));
  ASSERT_TRUE(WriteNpz(tmp / "data" / "a.npz", s));
  const fs::path bare = tmp / "bare-python";
  std::ofstream(bare) << "#!/bin/sh\nexec /usr/bin/python3 -I \"$@\"\n";
  fs::permissions(bare, fs::perms::owner_all);
  for (const std::string& python : {std::string("/bin/false"), bare.string()}) {
    auto r = RunProgram({"env", "PARITY_PYTHON=" + python, PARITY_BINARY, "check", (tmp / "m.onnx").string(),
                         "--dataset", (tmp / "data").string(), "--engine", "ray", "--report",
                         (tmp / "R").string()});
    ExpectExit(r, 2);
    EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("PARITY_PYTHON"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "R"));
    EXPECT_LT(r.wall_seconds, 30.0);
  }
}

}  // namespace
}  // namespace parity
