// Issue 29, second hostile-input review, the reading side: JSON parsed within
// a budget (probe 8), symlinks in a dump refused (probe 9), exit codes of a
// malformed model (probe 10). Each test builds its input and drives the real
// binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <string>

#include "core/npy.h"
#include "e2e_util.h"
#include "proto_wire.h"
#include "onnx/builder.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using e2e::RunParity;
using e2e::TempDir;

using e2e::WriteText;

using e2e::ExpectExit;

void SaveRelu(const fs::path& path) {
  ModelBuilder b;
  b.Output(b.Relu(b.Input("x", DType::kFloat32, {1, 4})), "y");
  ASSERT_TRUE(b.Build()->Save(path));
}

// Probe 8: a 64 MiB nested-array dump manifest cost 2.7 GB. Deep nesting and
// a text of many tiny values are refused before parsing, with little memory.
TEST(SecurityJsonBudget, DeepOrDenseManifestsAndConfigsAreRefusedBeforeParsing) {
  TempDir tmp("parity_inputs");
  ASSERT_NO_FATAL_FAILURE(SaveRelu(tmp / "m.onnx"));
  fs::create_directories(tmp / "dump");
  WriteText(tmp / "dump" / "manifest.json", std::string(4 << 20, '[') + std::string(4 << 20, ']'));
  auto r = RunParity({"align", (tmp / "m.onnx").string(), "--torch", (tmp / "dump").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("JSON nested 4194304 levels deep (parity reads at most 128)"), std::string::npos) << r.err;
  if (!e2e::kSanitized) EXPECT_LT(r.peak_rss_bytes, int64_t{400} << 20) << "8 MiB of text";

  std::string dense = "[";
  for (int i = 0; i < (4 << 20); ++i) dense += "{},";
  dense += "{}]";
  WriteText(tmp / "dump" / "manifest.json", dense);
  r = RunParity({"align", (tmp / "m.onnx").string(), "--torch", (tmp / "dump").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("too many small values"), std::string::npos) << r.err;
  if (!e2e::kSanitized) EXPECT_LT(r.peak_rss_bytes, int64_t{400} << 20) << "12 MiB of text";

  WriteText(tmp / "c.json", std::string(1000, '[') + std::string(1000, ']'));
  r = RunParity({"run", (tmp / "m.onnx").string(), "--config", (tmp / "c.json").string(), "--inputs", "x", "-o",
                 (tmp / "o.npz").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("nested 1000 levels deep"), std::string::npos) << r.err;
}

// Probe 9: symlinks inside a dump directory were followed (documented as not
// covered): an input linked to an outside .npy was read.
TEST(SecurityDump, SymlinkedFilesInADumpAreRefusedNamingTheFlag) {
  TempDir tmp("parity_inputs");
  ASSERT_NO_FATAL_FAILURE(SaveRelu(tmp / "m.onnx"));
  fs::create_directories(tmp / "dump");
  Tensor ones(DType::kFloat32, {1, 4});
  for (float& v : ones.mutable_view<float>()) v = 1.0f;
  ASSERT_TRUE(WriteNpy(tmp / "outside.npy", ones));
  ASSERT_TRUE(WriteNpy(tmp / "dump" / "y.npy", ones));
  fs::create_symlink(tmp / "outside.npy", tmp / "dump" / "x.npy");
  WriteText(tmp / "dump" / "manifest.json",
        R"({"schema": "parity.torch_dump/1", "torch_version": "2", "inputs": {"x": "x.npy"},
            "outputs": {"y": "y.npy"}, "layers": []})");
  auto r = RunParity({"check", (tmp / "m.onnx").string(), "--torch", (tmp / "dump").string(), "--runs", "1"});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("x.npy: is a symlink inside the dump directory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-symlinks"), std::string::npos) << r.err;
  r = RunParity({"check", (tmp / "m.onnx").string(), "--torch", (tmp / "dump").string(), "--runs", "1",
                 "--allow-symlinks"});
  EXPECT_EQ(r.err.find("is a symlink"), std::string::npos) << r.err;
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
}

// `run` exited 3 (the runtime failed) for a malformed model that `check`
// calls bad input: a Cast to int64 whose output is declared float. ORT
// refuses it with a plain failure; the checker says why, and it is exit 2.
TEST(SecurityModelExit, RunOnAModelTheCheckerRefusesIsBadInputNotARuntimeFailure) {
  TempDir tmp("parity_inputs");
  using e2e::Pb;
  const auto value = [](const std::string& name, int elem_type) {
    return Pb().Bytes(1, name).Msg(2, Pb().Msg(1, Pb().Int(1, elem_type).Msg(2, Pb().Msg(1, Pb().Int(1, 1)).Msg(1, Pb().Int(1, 4)))));
  };
  Pb to;  // AttributeProto: name (1), i (3), type (20) = INT (2)
  to.Bytes(1, "to").Int(3, 7).Int(20, 2);
  Pb node;
  node.Bytes(1, "x").Bytes(2, "y").Bytes(3, "cast").Bytes(4, "Cast").Msg(5, to);
  Pb graph;
  graph.Msg(1, node).Bytes(2, "g").Msg(11, value("x", 1)).Msg(12, value("y", 1));
  Pb model;
  model.Int(1, 8).Msg(7, graph).Msg(8, Pb().Int(2, 17));
  WriteText(tmp / "m.onnx", model.bytes);
  Tensor ones(DType::kFloat32, {1, 4});
  ASSERT_TRUE(WriteNpy(tmp / "x.npy", ones));
  auto r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "x.npy").string(), "-o",
                      (tmp / "o.npz").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("not a valid ONNX model"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "o.npz"));
}

// Probe 5: a passing check on a long Relu chain traced every tensor for the
// layer curve (ORT observing 100k outputs: minutes). Above kMaxCurveNodes a
// passing check skips the trace and says so; the verdict is unchanged.
TEST(SecurityGraphSize, APassingCheckOnALongChainDoesNotTraceEveryTensor) {
  TempDir tmp("parity_inputs");
  ModelBuilder b;
  std::string x = b.Input("x", DType::kFloat32, {1, 4});
  for (int i = 0; i < 10'001; ++i) x = b.Relu(x);
  b.Output(x, "y");
  ASSERT_TRUE(b.Build()->Save(tmp / "chain.onnx"));
  auto r = RunParity({"check", (tmp / "chain.onnx").string(), "--runs", "1", "--warmup", "0", "--json",
                      (tmp / "r.json").string()});
  ExpectExit(r, 0);
  std::ifstream in(tmp / "r.json");
  const auto j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out << r.err;
  EXPECT_EQ(j["overall_status"], "PASS");
  EXPECT_TRUE(j["layer_curve"].empty()) << "every tensor traced";
  bool noted = false;
  for (const auto& n : j["notes"]) noted = noted || n.get<std::string>().find("layer_curve not computed: the model has 10001 nodes") != std::string::npos;
  EXPECT_TRUE(noted) << j["notes"].dump();
}

// Probe 5, failing: a failing check localizes, and observing every tensor of
// a 10,500-node chain was one run with 10,500 extra outputs, refused (more
// than kMaxGraphOutputs): "locate could not run" after minutes. Now the
// first divergence is searched in rounds of at most 4096 tensors and found at
// the planted node; the check's CPU time stays within a loose multiple of a
// plain run's (measured ratios in docs/security.md; bench/chain_check.py).
TEST(SecurityGraphSize, AFailingCheckOnALongChainFindsThePlantedNodeInBoundedTime) {
  TempDir tmp("parity_inputs");
  const auto chain = [&](float c, const char* file) {
    ModelBuilder b;
    std::string x = b.Input("x", DType::kFloat32, {1, 4});
    const std::string k = b.ConstWeight("c", {1, 4}, c);
    for (int i = 0; i < 10'500; ++i) x = i == 5'000 ? b.Add(x, k) : b.Relu(x);
    b.Output(x, "y");
    ASSERT_TRUE(b.Build()->Save(tmp / file));
  };
  chain(0.0f, "ref.onnx");
  chain(1.0f, "bad.onnx");
  Tensor half(DType::kFloat32, {1, 4});
  for (float& v : half.mutable_view<float>()) v = 0.5f;
  ASSERT_TRUE(WriteNpy(tmp / "x.npy", half));
  auto run = RunParity({"run", (tmp / "ref.onnx").string(), "--inputs", (tmp / "x.npy").string(), "-o",
                        (tmp / "o.npz").string(), "--threads", "1"});
  ExpectExit(run, 0);
  auto r = RunParity({"check", (tmp / "bad.onnx").string(), "--reference-model", (tmp / "ref.onnx").string(),
                      "--runs", "1", "--warmup", "0", "--threads", "1", "--json", (tmp / "r.json").string()});
  ExpectExit(r, 1);
  std::ifstream in(tmp / "r.json");
  const auto j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out << r.err;
  ASSERT_TRUE(j["locate"].is_object()) << j["stages"].dump();
  EXPECT_EQ(j["locate"]["first_divergence"]["op_type"], "Add") << j["locate"]["first_divergence"].dump();
  bool rounds = false;
  for (const auto& n : j["locate"]["observer_notes"])
    rounds = rounds || n.get<std::string>().find("rounds of at most 4096") != std::string::npos;
  EXPECT_TRUE(rounds) << j["locate"]["observer_notes"].dump();
  EXPECT_EQ(j.dump().find("locate could not run"), std::string::npos);
  // Loose: a passing check alone is about 1.3x a run's CPU, this one ~15x
  // (two localizations, each a few sessions of the whole graph).
  std::printf("failing check %.1f s CPU, plain run %.1f s CPU: %.1fx\n", r.cpu_seconds, run.cpu_seconds,
              r.cpu_seconds / std::max(run.cpu_seconds, 0.01));
  EXPECT_LT(r.cpu_seconds, 60 * run.cpu_seconds + 30) << "run " << run.cpu_seconds << " s";
}

}  // namespace
}  // namespace parity
