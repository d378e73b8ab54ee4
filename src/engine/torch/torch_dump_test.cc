// Reading the PyTorch dump manifest: required keys and types, extra keys,
// paths that leave the directory, lazy layer reads checked against it.
#include "engine/torch/torch_dump.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/npy.h"
#include "core/testing/temp_dir.h"
#include "engine/torch/dump_check.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

class TorchDumpTest : public ::testing::Test {
 protected:
  void WriteManifest(const std::string& text) { std::ofstream(dir_ / "manifest.json") << text; }

  static std::string Manifest(const std::string& layer_fields, const std::string& extra = "") {
    return R"({"schema": "parity.torch_dump/1", "torch_version": "1.13", "inputs": {"x": "input_x.npy"},
      "outputs": {"y": "output_y.npy"}, "unknown_extra": [1, 2],)" +
           extra + R"( "layers": [{"file": "layer_0000_fc.npy", "module": "fc", "type": "Linear", "call": 0,
      "output_index": null, "dtype": "float32", "shape": [2, 3], "min": 0)" +
           layer_fields + "}]}";
  }

  const testing::TempDir tmp_{"parity_torch_dump"};
  const fs::path& dir_ = tmp_.path();
};

TEST_F(TorchDumpTest, ReadsAValidManifestWithExtraFields) {
  WriteManifest(Manifest("", R"( "export": {"exporter": "torchscript", "opset": 17, "input_names": ["x"],
      "output_names": ["y"], "dynamic_axes": {"x": {"0": "batch"}}, "more": true},)"));
  auto dump = LoadTorchDump(dir_);
  ASSERT_TRUE(dump) << dump.error().message();
  ASSERT_EQ(dump->layers.size(), 1u);
  EXPECT_EQ(dump->layers[0].module, "fc");
  EXPECT_EQ(dump->layers[0].shape, (Shape{2, 3}));
  EXPECT_FALSE(dump->layers[0].output_index);
  EXPECT_TRUE(dump->IsLeaf(0));
  ASSERT_EQ(dump->inputs.size(), 1u);
  EXPECT_EQ(dump->inputs[0].first, "x");
  ASSERT_TRUE(dump->export_record);
  EXPECT_EQ(dump->export_record->opset, 17);
  EXPECT_EQ(dump->export_record->dynamic_axes["x"]["0"], "batch");
}

TEST_F(TorchDumpTest, ErrorsNameTheFileAndKey) {
  std::string text = Manifest("");
  text.replace(text.find(R"("call": 0)"), 9, R"("call": "zero")");
  WriteManifest(text);
  auto dump = LoadTorchDump(dir_);
  ASSERT_FALSE(dump);
  EXPECT_NE(dump.error().message().find("manifest.json"), std::string::npos) << dump.error().message();
  EXPECT_NE(dump.error().message().find("layers[0].call: expected an integer, got a string"),
            std::string::npos)
      << dump.error().message();
}

TEST_F(TorchDumpTest, RejectsMissingKeysOtherSchemasAndEscapingPaths) {
  WriteManifest(R"({"schema": "parity.torch_dump/1", "torch_version": "1", "inputs": {}, "outputs": {}})");
  auto missing = LoadTorchDump(dir_);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("layers: required key missing"), std::string::npos);

  WriteManifest(
      R"({"schema": "parity.baseline/1", "torch_version": "1", "inputs": {}, "outputs": {}, "layers": []})");
  auto schema = LoadTorchDump(dir_);
  ASSERT_FALSE(schema);
  EXPECT_NE(schema.error().message().find("schema"), std::string::npos);

  WriteManifest(R"({"schema": "parity.torch_dump/1", "torch_version": "1", "inputs": {"x": "../x.npy"},
      "outputs": {}, "layers": []})");
  auto escape = LoadTorchDump(dir_);
  ASSERT_FALSE(escape);
  EXPECT_NE(escape.error().message().find("inputs.x"), std::string::npos) << escape.error().message();

  // docs/security.md: a dump without outputs would pass every comparison.
  WriteManifest(R"({"schema": "parity.torch_dump/1", "torch_version": "1", "inputs": {}, "outputs": {},
      "layers": []})");
  auto no_outputs = LoadTorchDump(dir_);
  ASSERT_FALSE(no_outputs);
  EXPECT_NE(no_outputs.error().message().find("the dump records no output"), std::string::npos);

  WriteManifest("{not json");
  EXPECT_EQ(LoadTorchDump(dir_).error().code(), ErrorCode::kInvalidArgument);
  fs::remove(dir_ / "manifest.json");
  EXPECT_EQ(LoadTorchDump(dir_).error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(LoadTorchDump(dir_ / "nope").error().code(), ErrorCode::kNotFound);
}

// Issue 28: a dump holds the traced sample and others at other sizes; a dump
// made before them is one sample.
TEST_F(TorchDumpTest, ReadsSamplesAtOtherSizesAndTracerWarnings) {
  WriteManifest(Manifest("", R"( "export": {"exporter": "torchscript", "tracer_warnings": ["m.py:3: float"]},
      "sizes": [{"name": "batch2", "inputs": {"x": "sizes/batch2/input_x.npy"},
                 "outputs": {"y": "sizes/batch2/output_y.npy"},
                 "outputs_fp64": {"y": "sizes/batch2/fp64/output_y.npy"}}],
      "sizes_refused": [{"name": "x1", "error": "too small"}],)"));
  auto dump = LoadTorchDump(dir_);
  ASSERT_TRUE(dump) << dump.error().message();
  const auto samples = dump->Samples();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].name, "traced");
  EXPECT_EQ(samples[0].inputs, dump->inputs);
  EXPECT_EQ(samples[1].name, "batch2");
  EXPECT_EQ(samples[1].outputs_fp64[0].second, "sizes/batch2/fp64/output_y.npy");
  EXPECT_EQ(dump->sizes_refused, (std::vector<std::string>{"x1: too small"}));
  EXPECT_EQ(dump->export_record->tracer_warnings, (std::vector<std::string>{"m.py:3: float"}));

  WriteManifest(Manifest(""));
  auto old = LoadTorchDump(dir_);
  ASSERT_TRUE(old) << old.error().message();
  EXPECT_EQ(old->Samples().size(), 1u);

  WriteManifest(Manifest("", R"( "sizes": [{"name": "b", "inputs": {"x": "../x.npy"}, "outputs": {"y": "y.npy"}}],)"));
  auto escape = LoadTorchDump(dir_);
  ASSERT_FALSE(escape);
  EXPECT_NE(escape.error().message().find("sizes[0].inputs.x"), std::string::npos) << escape.error().message();
  WriteManifest(Manifest("", R"( "sizes": [{"name": "traced", "inputs": {}, "outputs": {"y": "y.npy"}}],)"));
  EXPECT_FALSE(LoadTorchDump(dir_));
}

TEST_F(TorchDumpTest, AFileIsNotADumpAndTheMessageSaysSo) {
  std::ofstream(dir_ / "dump.json") << "{}";
  auto dump = LoadTorchDump(dir_ / "dump.json");
  ASSERT_FALSE(dump);
  EXPECT_EQ(dump.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(dump.error().message().find("is a file, not a PyTorch dump directory"), std::string::npos);
  EXPECT_EQ(dump.error().message().find("no such directory"), std::string::npos);
}

TEST_F(TorchDumpTest, LoadLayerChecksTheManifest) {
  WriteManifest(Manifest(""));
  auto dump = LoadTorchDump(dir_);
  ASSERT_TRUE(dump);
  ASSERT_TRUE(WriteNpy(dir_ / "layer_0000_fc.npy",
                       Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6})));
  auto t = LoadLayer(*dump, dump->layers[0]);
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->shape(), (Shape{2, 3}));
  ASSERT_TRUE(WriteNpy(dir_ / "layer_0000_fc.npy",
                       Tensor::FromVector<float>(DType::kFloat32, {3, 2}, {1, 2, 3, 4, 5, 6})));
  auto bad = LoadLayer(*dump, dump->layers[0]);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(bad.error().message().find("layer_0000_fc.npy"), std::string::npos);
}

// Issue 29, probe 9: a layer file linked to an outside .npy was read and its
// values reported; a linked folder leaked file sizes.
TEST_F(TorchDumpTest, SymlinksInsideTheDumpAreRefusedUnlessAllowed) {
  const testing::TempDir outside{"parity_torch_outside"};
  ASSERT_TRUE(WriteNpy(outside / "secret.npy",
                       Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6})));
  WriteManifest(Manifest(""));
  fs::create_symlink(outside / "secret.npy", dir_ / "layer_0000_fc.npy");
  auto dump = LoadTorchDump(dir_);
  ASSERT_TRUE(dump) << dump.error().message();
  auto refused = LoadLayer(*dump, dump->layers[0]);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message().find("layer_0000_fc.npy: is a symlink inside the dump directory"),
            std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("--allow-symlinks"), std::string::npos);
  auto allowed = LoadTorchDump(dir_, {.allow_symlinks = true});
  ASSERT_TRUE(allowed);
  EXPECT_TRUE(LoadLayer(*allowed, allowed->layers[0]));

  // A linked folder on the way, and a linked manifest.
  std::string text = Manifest("");
  text.replace(text.find("\"layer_0000_fc.npy\""), 19, "\"sub/secret.npy\"");
  WriteManifest(text);
  fs::create_directory_symlink(outside.path(), dir_ / "sub");
  dump = LoadTorchDump(dir_);
  ASSERT_TRUE(dump) << dump.error().message();
  auto folder = LoadLayer(*dump, dump->layers[0]);
  ASSERT_FALSE(folder);
  EXPECT_NE(folder.error().message().find("sub: is a symlink"), std::string::npos) << folder.error().message();
  fs::rename(dir_ / "manifest.json", outside / "manifest.json");
  fs::create_symlink(outside / "manifest.json", dir_ / "manifest.json");
  auto manifest = LoadTorchDump(dir_);
  ASSERT_FALSE(manifest);
  EXPECT_NE(manifest.error().message().find("manifest.json: is a symlink"), std::string::npos);
}

// The provenance note (check adds it once the model's hash is there): none
// when the export record names one of the given files' sha256 or none at
// all; else it names the dump, both hashes' prefixes and the model.
TEST(DumpProvenanceNote, SaysOnlyWhenTheExportIsAnotherFile) {
  TorchDump dump;
  dump.dir = "d";
  EXPECT_EQ(DumpProvenanceNote(dump, "m.onnx", {"aaaa"}), "");  // no export record
  dump.export_record = TorchExportRecord{.sha256 = "abcdef0123456789"};
  EXPECT_EQ(DumpProvenanceNote(dump, "m.onnx", {"ffff", "abcdef0123456789"}), "");  // the derived model's export
  const std::string note = DumpProvenanceNote(dump, "m.onnx", {"9876543210fedcba"});
  EXPECT_NE(note.find("d: the dump was made with an export of sha256 abcdef012345..."), std::string::npos) << note;
  EXPECT_NE(note.find("m.onnx is 9876543210fe..."), std::string::npos) << note;
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// Issue 46, class 4: a manifest of 120k layers without `is_leaf` made a
// passing check quadratic (678 s): every layer was compared with every other.
// Leaves are now found once at load (n log n), and are right.
TEST(TorchDumpLeaves, AManifestOfManyLayersWithoutIsLeafIsReadInLinearTime) {
  const testing::TempDir tmp("parity_torch_leaves");
  constexpr int kLayers = 120000;
  std::string text = R"({"schema": "parity.torch_dump/1", "torch_version": "1", "inputs": {"x": "x.npy"},
    "outputs": {"y": "y.npy"}, "layers": [)";
  for (int i = 0; i < kLayers; ++i)  // blocks.i (a parent) holds blocks.i.fc (a leaf)
    text += fmt::format(R"({}{{"file": "l{}.npy", "module": "blocks.{}{}", "type": "T", "call": 0,
      "output_index": null, "dtype": "float32", "shape": [1], "note": "{}"}})",
                        i ? "," : "", i, i / 2, i % 2 ? ".fc" : "", std::string(160, 'x'));  // within the JSON budget
  text += "]}";
  std::ofstream(tmp.path() / "manifest.json") << text;
  const auto start = std::chrono::steady_clock::now();
  auto dump = LoadTorchDump(tmp.path());
  ASSERT_TRUE(dump) << dump.error().message();
  int leaves = 0;
  for (size_t i = 0; i < dump->layers.size(); ++i) leaves += dump->IsLeaf(i);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(leaves, kLayers / 2);
  EXPECT_FALSE(dump->IsLeaf(0));  // blocks.0 holds blocks.0.fc
  EXPECT_TRUE(dump->IsLeaf(1));
  // The quadratic walk took minutes here (7.2e9 prefix tests); linear takes
  // well under a second. The bound is loose: a shared, loaded machine.
  EXPECT_LT(seconds, 30.0);
}

}  // namespace
}  // namespace parity
