#include "onnx/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "onnx/builder.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/model_internal.h"
#include "onnx/test_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::WriteRaw;

const fs::path kRelu = testing::kOnnxNodeData / "test_relu" / "model.onnx";

void ExpectNamesFile(const Result<Model>& r, const fs::path& p, const std::string& needle) {
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument) << r.error().message();
  EXPECT_NE(r.error().message().find(p.string()), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
}

TEST(ModelLoad, LoadsAndRoundTrips) {
  if (!fs::exists(kRelu)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto m = Model::Load(kRelu);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->path(), kRelu);
  EXPECT_FALSE(m->had_external_data());
  TempDir dir;
  ASSERT_TRUE(m->Save(dir / "copy.onnx"));
  auto back = Model::Load(dir / "copy.onnx");
  ASSERT_TRUE(back);
  EXPECT_TRUE(*back->Serialize() == *m->Serialize());
  Model clone = m->Clone();
  EXPECT_TRUE(*clone.Serialize() == *m->Serialize());
  auto from_bytes = Model::FromBytes(*m->Serialize());
  ASSERT_TRUE(from_bytes);
  EXPECT_TRUE(*from_bytes->Serialize() == *m->Serialize());
}

TEST(ModelLoad, RejectsBadFilesNamingThem) {
  if (!fs::exists(kRelu)) GTEST_SKIP() << "libonnx-testdata not installed";
  TempDir dir;
  const std::string good = testing::ReadRaw(kRelu);
  WriteRaw(dir / "empty.onnx", "");
  WriteRaw(dir / "truncated.onnx", good.substr(0, good.size() / 2));
  std::string random(4096, '\0');
  std::mt19937 rng(1);
  for (auto& c : random) c = static_cast<char>(rng());
  WriteRaw(dir / "random.onnx", random);
  ExpectNamesFile(Model::Load(dir / "empty.onnx"), dir / "empty.onnx", "not a valid ONNX model (empty file)");
  ExpectNamesFile(Model::Load(dir / "truncated.onnx"), dir / "truncated.onnx", "not a valid ONNX model");
  ExpectNamesFile(Model::Load(dir / "random.onnx"), dir / "random.onnx", "not a valid ONNX model");
  auto missing = Model::Load(dir / "missing.onnx");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  auto directory = Model::Load(dir.path());
  ASSERT_FALSE(directory);
}

TEST(ModelLoad, RejectsUndefinedTensorNamingNodeAndTensor) {
  if (!fs::exists(kRelu)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto m = Model::Load(kRelu);
  ASSERT_TRUE(m);
  auto& proto = onnx_adapter::MutableProto(*m);
  auto* n = proto.mutable_graph()->mutable_node(0);
  n->set_name("my_relu");
  n->set_input(0, "ghost");
  TempDir dir;
  ASSERT_TRUE(m->Save(dir / "bad.onnx"));
  auto r = Model::Load(dir / "bad.onnx");
  ExpectNamesFile(r, dir / "bad.onnx", "node 'my_relu' (Relu) reads tensor 'ghost'");
}

TEST(ModelLoad, RejectsExternalDataOutsideModelDir) {
  if (!fs::exists(kRelu)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto m = Model::Load(kRelu);
  ASSERT_TRUE(m);
  auto& g = *onnx_adapter::MutableProto(*m).mutable_graph();
  auto* t = g.add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("../../etc/passwd");
  TempDir dir;
  WriteRaw(dir / "ext.onnx", *m->Serialize());
  auto r = Model::Load(dir / "ext.onnx");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("leaves the model's directory"), std::string::npos)
      << r.error().message();
  e->set_value("missing.bin");
  WriteRaw(dir / "ext2.onnx", *m->Serialize());
  auto r2 = Model::Load(dir / "ext2.onnx");
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(r2.error().message().find("tensor 'w'"), std::string::npos) << r2.error().message();
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

TEST(ModelSave, ExternalDataRoundTrips) {
  Model m = ResidualCnn();
  TempDir dir;
  ASSERT_TRUE(m.Save(dir / "ext.onnx",
                     {.external_data = SaveOptions::ExternalData::kAlways, .size_threshold = 1024}));
  ASSERT_TRUE(fs::exists(dir / "ext.onnx.data"));
  EXPECT_LT(fs::file_size(dir / "ext.onnx"), fs::file_size(dir / "ext.onnx.data"));
  auto loaded = Model::Load(dir / "ext.onnx");
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_TRUE(loaded->had_external_data());
  EXPECT_TRUE(*loaded->Serialize() == *m.Serialize());  // data inlined again, byte for byte

  // Saving a model that came with external data keeps it external, next to the new path.
  fs::create_directories(dir / "moved");
  ASSERT_TRUE(loaded->Save(dir / "moved" / "copy.onnx"));
  ASSERT_TRUE(fs::exists(dir / "moved" / "copy.onnx.data"));
  auto again = Model::Load(dir / "moved" / "copy.onnx");
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_TRUE(*again->Serialize() == *m.Serialize());

  // A truncated data file is reported, naming the tensor.
  const std::string data = testing::ReadRaw(dir / "ext.onnx.data");
  WriteRaw(dir / "ext.onnx.data", data.substr(0, data.size() / 2));
  auto broken = Model::Load(dir / "ext.onnx");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code(), ErrorCode::kCorrupt) << broken.error().message();
  EXPECT_NE(broken.error().message().find("ext.onnx"), std::string::npos);

  // Structure only: the data file is neither read nor checked.
  fs::remove(dir / "ext.onnx.data");
  auto structure = Model::Load(dir / "ext.onnx", {.external_data = false});
  ASSERT_TRUE(structure) << structure.error().message();
  EXPECT_FALSE(structure->had_external_data());
  EXPECT_EQ(onnx_adapter::Proto(*structure).graph().node_size(), onnx_adapter::Proto(m).graph().node_size());
}

TEST(ModelSave, FromBytesWithExternalDataNeedsAPath) {
  Model m = ConvBnRelu();
  TempDir dir;
  ASSERT_TRUE(
      m.Save(dir / "e.onnx", {.external_data = SaveOptions::ExternalData::kAlways, .size_threshold = 16}));
  const std::string bytes = testing::ReadRaw(dir / "e.onnx");
  auto r = Model::FromBytes(bytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  auto ok = Model::FromBytes(bytes, "e.onnx", dir.path());
  ASSERT_TRUE(ok) << ok.error().message();
}

// Two MatMul layers of [128, 128] float weights: 64 KiB each, exactly
// kInlineExternalBelow, so saved external they stay references at load.
Model TwoMatMuls() {
  ModelBuilder b;
  std::string x = b.Input("x", DType::kFloat32, {1, 128});
  x = b.Relu(b.MatMul(x, b.RandomWeight("w0", {128, 128}, 0.1f)));
  b.Output(b.MatMul(x, b.RandomWeight("w1", {128, 128}, 0.1f)), "y");
  return *b.Build();
}

TEST(ModelLoad, LargeExternalInitializersStayReferencesReadInPlace) {
  const Model m = TwoMatMuls();
  TempDir dir;
  ASSERT_TRUE(m.Save(dir / "big.onnx", {.external_data = SaveOptions::ExternalData::kAlways}));
  auto loaded = Model::Load(dir / "big.onnx");
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_TRUE(loaded->had_external_data());
  EXPECT_EQ(loaded->external_data_dir(), fs::canonical(dir.path()));
  // No weight byte in memory: both initializers are still references.
  int external = 0;
  for (const auto& t : onnx_adapter::Proto(*loaded).graph().initializer()) {
    EXPECT_FALSE(t.has_raw_data()) << t.name();
    external += t.data_location() == onnx::TensorProto::EXTERNAL;
  }
  EXPECT_EQ(external, 2);
  // What ORT loads from memory keeps them references; Serialize() reads them.
  EXPECT_LT(loaded->SerializeKeepingExternalData()->size(), 4096u);
  EXPECT_TRUE(*loaded->Serialize() == *m.Serialize());
  // A value is read through the bounded reader, the region keeps the folder.
  auto w1 = ReadInitializer(*loaded, "w1");
  ASSERT_TRUE(w1) << w1.error().message();
  EXPECT_EQ(w1->byte_size(), 128u * 128u * 4u);
  EXPECT_TRUE(std::ranges::equal(w1->bytes(), ReadInitializer(m, "w1")->bytes()));
  auto clone = loaded->Clone();
  EXPECT_EQ(clone.external_data_dir(), loaded->external_data_dir());
  // Saved elsewhere, the pair stands alone.
  fs::create_directories(dir / "moved");
  ASSERT_TRUE(loaded->Save(dir / "moved" / "m.onnx"));
  auto moved = Model::Load(dir / "moved" / "m.onnx");
  ASSERT_TRUE(moved) << moved.error().message();
  EXPECT_TRUE(*moved->Serialize() == *m.Serialize());
  // The reader checks again: a data file cut after the load is refused.
  fs::resize_file(dir / "big.onnx.data", 1000);
  auto cut = ReadInitializer(*loaded, "w1");
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().code(), ErrorCode::kCorrupt) << cut.error().message();
  EXPECT_NE(cut.error().message().find("w1"), std::string::npos) << cut.error().message();
}


TEST(ModelLoad, InlineWeightsStayInTheFileReadInPlace) {
  const Model m = TwoMatMuls();
  TempDir dir;
  ASSERT_TRUE(m.Save(dir / "inline.onnx"));  // one file, weights inline
  ASSERT_FALSE(fs::exists(dir / "inline.onnx.data"));
  const std::string file = testing::ReadRaw(dir / "inline.onnx");
  auto loaded = Model::Load(dir / "inline.onnx");
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_TRUE(loaded->weights_in_file());
  EXPECT_FALSE(loaded->had_external_data());
  EXPECT_EQ(loaded->external_data_dir(), fs::canonical(dir.path()));
  EXPECT_TRUE(loaded->unmodified_file().empty());  // ORT gets the graph, not the file whole
  // Each weight is a reference to its own bytes in the model's file.
  int left = 0;
  for (const auto& t : onnx_adapter::Proto(*loaded).graph().initializer()) {
    ASSERT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL) << t.name();
    EXPECT_FALSE(t.has_raw_data());
    std::map<std::string, std::string> kv;
    for (const auto& e : t.external_data()) kv[e.key()] = e.value();
    EXPECT_EQ(kv["location"], "inline.onnx");
    const auto expected = ReadInitializer(m, t.name());
    ASSERT_TRUE(expected);
    const size_t offset = std::stoull(kv["offset"]), length = std::stoull(kv["length"]);
    ASSERT_EQ(length, expected->byte_size());
    EXPECT_EQ(file.compare(offset, length, reinterpret_cast<const char*>(expected->bytes().data()), length), 0);
    ++left;
  }
  EXPECT_EQ(left, 2);
  EXPECT_LT(loaded->SerializeKeepingExternalData()->size(), 4096u);
  EXPECT_TRUE(*loaded->Serialize() == *m.Serialize());  // byte for byte what a whole parse serializes
  EXPECT_TRUE(loaded->Clone().weights_in_file());
  // Saved elsewhere it is one file again, inline like the original.
  fs::create_directories(dir / "moved");
  ASSERT_TRUE(loaded->Save(dir / "moved" / "copy.onnx"));
  EXPECT_FALSE(fs::exists(dir / "moved" / "copy.onnx.data"));
  auto moved = Model::Load(dir / "moved" / "copy.onnx");
  ASSERT_TRUE(moved) << moved.error().message();
  EXPECT_TRUE(*moved->Serialize() == *m.Serialize());

  // Structure only: nothing is left in the file, the model is parsed whole.
  auto structure = Model::Load(dir / "inline.onnx", {.external_data = false});
  ASSERT_TRUE(structure);
  EXPECT_FALSE(structure->weights_in_file());
  // Weights under kInlineExternalBelow stay in memory; the file is offered whole.
  ASSERT_TRUE(ConvBnRelu().Save(dir / "small.onnx"));
  auto small = Model::Load(dir / "small.onnx");
  ASSERT_TRUE(small);
  EXPECT_FALSE(small->weights_in_file());
  EXPECT_EQ(small->unmodified_file(), dir / "small.onnx");
}

TEST(ModelLoad, InlineWeightsThroughASymlinkFromAnotherFolderAreParsedWhole) {
  const Model m = TwoMatMuls();
  TempDir dir;
  fs::create_directories(dir / "real");
  fs::create_directories(dir / "links");
  ASSERT_TRUE(m.Save(dir / "real" / "m.onnx"));
  fs::create_symlink(dir / "real" / "m.onnx", dir / "links" / "m.onnx");
  // A reference to "m.onnx" would resolve outside links/: refused there.
  auto loaded = Model::Load(dir / "links" / "m.onnx");
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_FALSE(loaded->weights_in_file());
  EXPECT_EQ(loaded->unmodified_file(), dir / "links" / "m.onnx");
  EXPECT_TRUE(*loaded->Serialize() == *m.Serialize());
}

TEST(ModelLoad, InlineWeightOfTheWrongSizeStaysInMemoryAndIsRefusedAsBefore) {
  Model m = TwoMatMuls();
  auto& w0 = *onnx_adapter::MutableProto(m).mutable_graph()->mutable_initializer(0);
  ASSERT_EQ(w0.name(), "w0");
  w0.set_dims(1, 64);  // declares 32 KiB, holds 64 KiB
  TempDir dir;
  ASSERT_TRUE(m.Save(dir / "bad.onnx"));
  auto r = Model::Load(dir / "bad.onnx");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("w0"), std::string::npos) << r.error().message();
  EXPECT_EQ(r.error().message().find("external"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace parity
