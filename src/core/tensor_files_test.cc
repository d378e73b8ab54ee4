#include "core/tensor_files.h"

#include <gtest/gtest.h>

#include "core/io_test_util.h"
#include "core/npy.h"

namespace parity {
namespace {

using testing::TempDir;

Tensor Scalar(float v) { return Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{v}); }

TensorSet Set(std::initializer_list<std::pair<std::string, float>> items) {
  TensorSet s;
  for (const auto& [name, v] : items) s.Set(name, Scalar(v));
  return s;
}

TEST(ReadNpyDir, ReadsNpyFilesSortedByNameIgnoringOthers) {
  TempDir dir;
  ASSERT_TRUE(
      WriteNpyDir(dir.path(), Set({{"output", 3}, {"input", 1}, {"layer_0001_conv", 2}})).has_value());
  testing::WriteFileString(dir / "manifest.json", "{}");
  std::filesystem::create_directory(dir / "sub.npy");  // a directory, not a file
  auto set = ReadNpyDir(dir.path());
  ASSERT_TRUE(set.has_value()) << set.error().message();
  EXPECT_EQ(set->Names(), (std::vector<std::string>{"input", "layer_0001_conv", "output"}));
  EXPECT_EQ(set->Find("output")->GetAsDouble(0), 3.0);
}

TEST(ReadNpyDir, ErrorsNameTheDirectoryOrTheBadFile) {
  TempDir dir;
  auto missing = ReadNpyDir(dir / "nope");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  testing::WriteFileString(dir / "file", "x");
  auto not_dir = ReadNpyDir(dir / "file");
  ASSERT_FALSE(not_dir.has_value());
  EXPECT_EQ(not_dir.error().code(), ErrorCode::kInvalidArgument);
  testing::WriteFileString(dir / "bad.npy", "not numpy");
  auto bad = ReadNpyDir(dir.path());
  ASSERT_FALSE(bad.has_value());
  EXPECT_TRUE(bad.error().message().starts_with((dir / "bad.npy").string() + ": ")) << bad.error().message();
}

TEST(ReadNpyDir, EmptyDirectoryGivesEmptySet) {
  TempDir dir;
  auto set = ReadNpyDir(dir.path());
  ASSERT_TRUE(set.has_value());
  EXPECT_TRUE(set->empty());
}

TEST(WriteNpyDir, RefusesNamesThatAreNotFileNamesBeforeWritingAnything) {
  TempDir dir;
  for (const char* bad : {"a/b", "", "..", "."}) {
    auto s = WriteNpyDir(dir / "out", Set({{"fine", 1}, {bad, 2}}));
    ASSERT_FALSE(s.has_value()) << bad;
    EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

TEST(SplitSamples, BareKeysFormTheDefaultSample) {
  auto samples = SplitSamples(Set({{"images", 1}, {"mask", 2}}));
  ASSERT_TRUE(samples.has_value());
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ((*samples)[0].name, "default");
  EXPECT_EQ((*samples)[0].tensors.Names(), (std::vector<std::string>{"images", "mask"}));
}

TEST(SplitSamples, GroupsPrefixedKeysInOrderOfFirstAppearance) {
  auto samples = SplitSamples(
      Set({{"typical/images", 1}, {"anomaly_nan/images", 2}, {"typical/mask", 3}, {"anomaly_nan/a/b", 4}}));
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0].name, "typical");
  EXPECT_EQ((*samples)[0].tensors.Names(), (std::vector<std::string>{"images", "mask"}));
  EXPECT_EQ((*samples)[1].name, "anomaly_nan");
  EXPECT_EQ((*samples)[1].tensors.Names(),
            (std::vector<std::string>{"images", "a/b"}));  // split at the first '/'
  EXPECT_EQ((*samples)[1].tensors.Find("images")->GetAsDouble(0), 2.0);
}

TEST(SplitSamples, RejectsMixedAndEmptyNames) {
  auto mixed = SplitSamples(Set({{"typical/images", 1}, {"images", 2}}));
  ASSERT_FALSE(mixed.has_value());
  EXPECT_NE(mixed.error().message().find("mix"), std::string::npos);
  EXPECT_FALSE(SplitSamples(Set({{"/images", 1}})).has_value());
  EXPECT_FALSE(SplitSamples(Set({{"typical/", 1}})).has_value());
}

TEST(SplitSamples, EmptySetGivesNoSamples) {
  auto samples = SplitSamples(TensorSet());
  ASSERT_TRUE(samples.has_value());
  EXPECT_TRUE(samples->empty());
}

TEST(JoinSamples, IsTheInverseOfSplitSamples) {
  for (const TensorSet& original :
       {Set({{"images", 1}, {"mask", 2}}), Set({{"typical/x", 1}, {"boundary_batch4/x", 2}}),
        Set({{"default/x", 1}, {"typical/x", 2}}), Set({{"typical/x", 1}})}) {
    auto samples = SplitSamples(original);
    ASSERT_TRUE(samples.has_value());
    const TensorSet joined = JoinSamples(*samples);
    EXPECT_EQ(joined.Names(), original.Names());
  }
}

}  // namespace
}  // namespace parity
