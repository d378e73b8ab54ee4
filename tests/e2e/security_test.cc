// Hostile inputs through the real binary (docs/security.md): each test builds
// the input an attacker would ship (a model, a baseline, a dump, a config)
// and checks that parity writes nothing outside its named outputs, reads
// nothing it should not, ends with an honest exit code and never a signal.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/npy.h"
#include "core/io_test_util.h"
#include "e2e_util.h"
#include "proto_wire.h"
#include "onnx/builder.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using e2e::RunParity;
using Json = nlohmann::json;

using e2e::TempDir;

using testing::ReadFileString;
using e2e::WriteText;
using e2e::ReadJson;
void WriteJson(const fs::path& p, const Json& j) { WriteText(p, j.dump(2)); }

// The small model in scope "blk": its intermediate is a layer.
Model SmallModel() { return e2e::AddReluModel(0.5f, "output", "blk"); }

// A model, its inputs and its baseline in `tmp`.
void MakeBaseline(const TempDir& tmp) {
  ASSERT_TRUE(SmallModel().Save(tmp / "m.onnx"));
  ASSERT_TRUE(WriteNpy(tmp / "in.npy", e2e::AddReluInput()));
  auto r = RunParity({"baseline", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o",
                      (tmp / "bl").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
}

using e2e::ExpectExit;

// The critical finding: a shipped baseline's config named optimized_model_path
// and ORT renamed its output over a shell start-up file.
TEST(SecurityBaseline, StoredConfigCannotMakeVerifyWriteAFile) {
  TempDir tmp("parity_security");
  MakeBaseline(tmp);
  WriteText(tmp / "victim.sh", "echo safe\n");
  Json manifest = ReadJson(tmp / "bl" / "manifest.json");
  manifest["config"]["optimized_model_path"] = (tmp / "victim.sh").string();
  WriteJson(tmp / "bl" / "manifest.json", manifest);
  auto r = RunParity({"baseline", "verify", (tmp / "bl").string(), (tmp / "m.onnx").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("optimized_model_path"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileString(tmp / "victim.sh"), "echo safe\n");

  manifest["config"].erase("optimized_model_path");
  manifest["config"]["session_config"] = {{"ep.context_enable", "1"},
                                          {"ep.context_file_path", (tmp / "victim.sh").string()}};
  WriteJson(tmp / "bl" / "manifest.json", manifest);
  r = RunParity({"baseline", "verify", (tmp / "bl").string(), (tmp / "m.onnx").string()});
  ExpectExit(r, 2);
  EXPECT_EQ(ReadFileString(tmp / "victim.sh"), "echo safe\n");
}

// Issue 29, probe 6: a manifest edited to 4096 threads passed the stored-config
// allowlist and `baseline verify` ran past 60 s on a one-node model.
TEST(SecurityBaseline, StoredThreadCountsAboveTheCapAreRefusedAtOnce) {
  TempDir tmp("parity_security");
  MakeBaseline(tmp);
  const Json good = ReadJson(tmp / "bl" / "manifest.json");
  for (const char* key : {"intra_op_threads", "inter_op_threads"}) {
    Json manifest = good;
    manifest["config"][key] = 4096;
    WriteJson(tmp / "bl" / "manifest.json", manifest);
    const auto start = std::chrono::steady_clock::now();
    auto r = RunParity({"baseline", "verify", (tmp / "bl").string(), (tmp / "m.onnx").string()});
    ExpectExit(r, 2);
    EXPECT_NE(r.err.find(fmt::format("config key '{}': 4096 threads in a stored config", key)), std::string::npos)
        << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << "refused before any session";
  }
}

TEST(SecurityBaseline, ManifestWithWrongJsonTypesExitsTwoNotAbort) {
  TempDir tmp("parity_security");
  MakeBaseline(tmp);
  const Json good = ReadJson(tmp / "bl" / "manifest.json");
  std::vector<Json> bad(6, good);
  bad[0]["schema"] = 1;
  bad[1]["samples"][0]["name"] = 5;
  bad[2]["samples"] = Json::array();
  bad[3]["config"] = "all";
  bad[4]["model"] = {{"sha256", 7}};
  bad[5]["samples"][0]["files"][0]["bytes"] = "many";
  for (size_t i = 0; i < bad.size(); ++i) {
    WriteJson(tmp / "bl" / "manifest.json", bad[i]);
    auto r = RunParity({"baseline", "verify", (tmp / "bl").string(), (tmp / "m.onnx").string()});
    SCOPED_TRACE(i);
    ExpectExit(r, 2);
    EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
  }
}

TEST(SecurityBaseline, SelfReferencingSymlinkInTheFolderIsNoSignal) {
  TempDir tmp("parity_security");
  MakeBaseline(tmp);
  fs::create_symlink("loop.npy", tmp / "bl" / "loop.npy");
  fs::create_symlink(".", tmp / "bl" / "again");
  auto r = RunParity({"baseline", "verify", (tmp / "bl").string(), (tmp / "m.onnx").string()});
  ExpectExit(r, 0);
}

TEST(SecurityBaseline, ListedFileThatIsASymlinkOutOfTheFolderIsNotRead) {
  TempDir tmp("parity_security");
  MakeBaseline(tmp);
  fs::copy_file(tmp / "bl" / "output.npy", tmp / "outside.npy");
  fs::remove(tmp / "bl" / "output.npy");
  fs::create_symlink(tmp / "outside.npy", tmp / "bl" / "output.npy");
  auto r = RunParity({"baseline", "verify", (tmp / "bl").string()});
  ExpectExit(r, 1);
  EXPECT_NE((r.out + r.err).find("outside the baseline directory"), std::string::npos) << r.out;
}

TEST(SecurityBaseline, VerifyAgainstAnotherModelComparesNothingAndFails) {
  TempDir tmp("parity_security");
  MakeBaseline(tmp);
  ASSERT_TRUE(e2e::AddReluModel(0.5f, "logits", "other").Save(tmp / "other.onnx"));
  auto r = RunParity({"baseline", "verify", (tmp / "bl").string(), (tmp / "other.onnx").string()});
  ExpectExit(r, 1);
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
}

TEST(SecurityBaseline, OverwriteLeavesAFolderParityDidNotWrite) {
  TempDir tmp("parity_security");
  ASSERT_TRUE(SmallModel().Save(tmp / "m.onnx"));
  ASSERT_TRUE(WriteNpy(tmp / "in.npy", e2e::AddReluInput()));
  fs::create_directories(tmp / "dump");
  WriteJson(tmp / "dump" / "manifest.json", {{"schema", "parity.torch_dump/1"}});
  ASSERT_TRUE(WriteNpy(tmp / "dump" / "layer_0000_conv.npy", e2e::AddReluInput()));
  auto r = RunParity({"baseline", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o",
                      (tmp / "dump").string(), "--overwrite"});
  ExpectExit(r, 2);
  EXPECT_TRUE(fs::exists(tmp / "dump" / "layer_0000_conv.npy"));
  EXPECT_TRUE(fs::exists(tmp / "dump" / "manifest.json"));
}

TEST(SecurityBaseline, OverwriteChecksTheInputsBeforeDeletingTheOldBaseline) {
  TempDir tmp("parity_security");
  MakeBaseline(tmp);
  Tensor wrong(DType::kFloat32, {1, 4});
  fs::create_directories(tmp / "inputs");
  ASSERT_TRUE(WriteNpy(tmp / "inputs" / "not_the_input.npy", wrong));
  auto r = RunParity({"baseline", (tmp / "m.onnx").string(), "--inputs", (tmp / "inputs").string(), "-o",
                      (tmp / "bl").string(), "--overwrite"});
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(fs::exists(tmp / "bl" / "manifest.json"));
  EXPECT_TRUE(fs::exists(tmp / "bl" / "output.npy"));
}

using e2e::Pb;  // proto_wire.h

// ValueInfoProto: name (1), type (2) = TypeProto.tensor_type (1) = {elem_type (1), shape (2) = {dim (1) = {dim_value (1)}}}.
Pb FloatValue(const std::string& name, const std::vector<int64_t>& dims) {
  Pb shape;
  for (int64_t d : dims) shape.Msg(1, Pb().Int(1, d));
  return Pb().Bytes(1, name).Msg(2, Pb().Msg(1, Pb().Int(1, 1).Msg(2, shape)));
}

TEST(SecurityBaseline, GraphInputThatIsAlsoAnOutputKeepsItsInputFile) {
  TempDir tmp("parity_security");
  // graph: input -> Relu -> relu; outputs relu and input itself.
  Pb node;
  node.Bytes(1, "input").Bytes(2, "relu").Bytes(3, "r").Bytes(4, "Relu");
  Pb graph;
  graph.Msg(1, node).Bytes(2, "g").Msg(11, FloatValue("input", {1, 4}));
  graph.Msg(12, FloatValue("relu", {1, 4})).Msg(12, FloatValue("input", {1, 4}));
  Pb model;
  model.Int(1, 8).Msg(7, graph).Msg(8, Pb().Int(2, 17));
  WriteText(tmp / "m.onnx", model.bytes);
  ASSERT_TRUE(WriteNpy(tmp / "in.npy", e2e::AddReluInput()));
  auto r = RunParity({"baseline", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o",
                      (tmp / "bl").string()});
  ExpectExit(r, 0);
  bool has_input = false;
  const Json manifest = ReadJson(tmp / "bl" / "manifest.json");
  for (const auto& f : manifest["samples"][0]["files"])
    has_input = has_input || (f["role"] == "input" && fs::exists(tmp / "bl" / f["file"].get<std::string>()));
  EXPECT_TRUE(has_input) << manifest.dump(2);
  r = RunParity({"baseline", "verify", (tmp / "bl").string(), (tmp / "m.onnx").string()});
  ExpectExit(r, 0);
}

// Issue 29, probe 2: a ~120-byte model with a STRING initializer of dims [2e8]
// and one string_data entry: `check` spent 12.5 s and 6.3 GB in ORT and exited
// 1. Refused as bad input before ORT sees it, by every command that loads it.
TEST(SecurityModel, StringInitializerDeclaringMoreThanItHoldsExitsTwoAtOnce) {
  TempDir tmp("parity_security");
  Pb node;
  node.Bytes(1, "input").Bytes(2, "relu").Bytes(3, "r").Bytes(4, "Relu");
  // TensorProto: dims (1), data_type (2) = STRING (8), string_data (6), name (8).
  Pb strings;
  strings.Int(1, 200'000'000).Int(2, 8).Bytes(6, "x").Bytes(8, "s");
  Pb graph;
  graph.Msg(1, node).Bytes(2, "g").Msg(5, strings).Msg(11, FloatValue("input", {1, 4}));
  graph.Msg(12, FloatValue("relu", {1, 4}));
  Pb model;
  model.Int(1, 8).Msg(7, graph).Msg(8, Pb().Int(2, 17));
  WriteText(tmp / "m.onnx", model.bytes);
  ASSERT_LT(model.bytes.size(), 200u);
  ASSERT_TRUE(WriteNpy(tmp / "in.npy", e2e::AddReluInput()));
  for (std::vector<std::string> args :
       {std::vector<std::string>{"check", (tmp / "m.onnx").string()},
        {"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o", (tmp / "o.npz").string()},
        {"inspect", (tmp / "m.onnx").string()}}) {
    const auto start = std::chrono::steady_clock::now();
    auto r = RunParity(args);
    ExpectExit(r, 2);
    EXPECT_NE(r.err.find("initializer 's': 1 strings for shape [200000000]"), std::string::npos) << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << args[0];
  }
}

// onnx/onnx#6180: ir_version 9 (the bundled checker skips it), a Conv whose
// weight is a scalar; ONNX's shape inference segfaults on it.
TEST(SecurityModel, ConvThatCrashesShapeInferenceIsReportedNotASignal) {
  TempDir tmp("parity_security");
  Pb node;
  node.Bytes(1, "in0").Bytes(1, "in1").Bytes(1, "in2").Bytes(2, "out0").Bytes(3, "conv").Bytes(4, "Conv");
  Pb graph;
  graph.Msg(1, node).Bytes(2, "g");
  graph.Msg(11, FloatValue("in0", {7, 6, 1, 5})).Msg(11, FloatValue("in1", {})).Msg(11, FloatValue("in2", {7, 2, 3, 2, 1}));
  graph.Msg(12, Pb().Bytes(1, "out0").Msg(2, Pb().Msg(1, Pb().Int(1, 1))));
  Pb model;
  model.Int(1, 9).Msg(7, graph).Msg(8, Pb().Int(2, 11));
  WriteText(tmp / "conv.onnx", model.bytes);
  auto r = RunParity({"inspect", (tmp / "conv.onnx").string()});
  ExpectExit(r, 0);
  EXPECT_NE(r.out.find("weight has rank 0"), std::string::npos) << r.out;
  r = RunParity({"check", (tmp / "conv.onnx").string(), "--runs", "1", "--warmup", "0"});
  EXPECT_EQ(r.term_signal, 0) << r.err;
  EXPECT_TRUE(r.exit_code == 1 || r.exit_code == 2) << r.exit_code << r.out << r.err;
}

TEST(SecurityFiles, FifoAndDevZeroAsInputsOrConfigAreRefusedQuickly) {
  TempDir tmp("parity_security");
  ASSERT_TRUE(SmallModel().Save(tmp / "m.onnx"));
  ASSERT_EQ(::mkfifo((tmp / "in.npy").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", tmp / "zero.json");
  auto r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o",
                      (tmp / "o.npz").string()});
  ExpectExit(r, 2);
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
  ASSERT_TRUE(WriteNpy(tmp / "ok.npy", e2e::AddReluInput()));
  r = RunParity({"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "ok.npy").string(), "-o",
                 (tmp / "o.npz").string(), "--config", (tmp / "zero.json").string()});
  ExpectExit(r, 2);
  EXPECT_LT(r.cpu_seconds, 5.0);
  EXPECT_LT(r.peak_rss_bytes, int64_t{1} << 30);
  fs::create_directories(tmp / "dump");
  ASSERT_EQ(::mkfifo((tmp / "dump" / "manifest.json").c_str(), 0600), 0);
  r = RunParity({"check", (tmp / "m.onnx").string(), "--torch", (tmp / "dump").string()});
  ExpectExit(r, 2);
}

// Saves y = Relu(x), x float32 [1, 4], with the given input and output names.
void SaveRelu(const fs::path& path, const std::string& input, const std::string& output) {
  ModelBuilder b;
  b.Output(b.Relu(b.Input(input, DType::kFloat32, {1, 4})), output);
  auto model = b.Build();
  ASSERT_TRUE(model) << model.error().message();
  ASSERT_TRUE(model->Save(path));
}

TEST(SecurityTerminal, EscapeSequencesInModelNamesDoNotReachTheTerminal) {
  TempDir tmp("parity_security");
  ASSERT_NO_FATAL_FAILURE(SaveRelu(tmp / "m.onnx", "x\r\x1b[2K\x1b[1APASS\x1b]0;owned\x07", "out\x1b[2K"));
  auto r = RunParity({"inspect", (tmp / "m.onnx").string()});
  ExpectExit(r, 0);
  EXPECT_EQ(r.out.find("\x1b[2K"), std::string::npos);
  EXPECT_EQ(r.out.find("\x1b]"), std::string::npos);
  EXPECT_EQ(r.out.find('\r'), std::string::npos);
  EXPECT_NE(r.out.find("\\x1b[2K"), std::string::npos) << r.out;  // shown, escaped
}

TEST(SecurityRepro, ReproIntoAFolderOfTheUsersOwnFilesIsRefusedBeforeRunning) {
  TempDir tmp("parity_security");
  ASSERT_TRUE(SmallModel().Save(tmp / "m.onnx"));
  WriteText(tmp / "model.onnx", "the user's own model");
  auto r = RunParity({"locate", (tmp / "m.onnx").string(), "--repro", tmp.path().string()});
  ExpectExit(r, 2);
  EXPECT_EQ(ReadFileString(tmp / "model.onnx"), "the user's own model");
}

TEST(SecurityRepro, TargetConfigFileCannotNameAFileToWrite) {
  TempDir tmp("parity_security");
  ASSERT_TRUE(SmallModel().Save(tmp / "m.onnx"));
  WriteJson(tmp / "target.json", {{"opt", "all"}, {"optimized_model_path", (tmp / "victim").string()}});
  auto r = RunParity({"locate", (tmp / "m.onnx").string(), "--target", (tmp / "target.json").string()});
  ExpectExit(r, 2);
  EXPECT_FALSE(fs::exists(tmp / "victim"));
}

TEST(SecurityTorch, DumpWithoutOutputsIsRefusedNotPassed) {
  TempDir tmp("parity_security");
  ASSERT_TRUE(SmallModel().Save(tmp / "m.onnx"));
  fs::create_directories(tmp / "dump");
  ASSERT_TRUE(WriteNpy(tmp / "dump" / "input.npy", e2e::AddReluInput()));
  WriteJson(tmp / "dump" / "manifest.json", {{"schema", "parity.torch_dump/1"},
                                             {"torch_version", "2"},
                                             {"inputs", {{"input", "input.npy"}}},
                                             {"outputs", Json::object()},
                                             {"layers", Json::array()}});
  auto r = RunParity({"check", (tmp / "m.onnx").string(), "--torch", (tmp / "dump").string()});
  ExpectExit(r, 2);
}

TEST(SecurityJson, NonUtf8InputNameInBenchJsonIsNoSignal) {
  TempDir tmp("parity_security");
  ASSERT_NO_FATAL_FAILURE(SaveRelu(tmp / "m.onnx", "in\xff\xfe", "out"));
  auto r = RunParity({"bench", (tmp / "m.onnx").string(), "--runs", "1", "--warmup", "0", "--configs", "disable",
                      "--json", (tmp / "b.json").string()});
  ExpectExit(r, 0);
  EXPECT_TRUE(fs::exists(tmp / "b.json"));
}

}  // namespace
}  // namespace parity
