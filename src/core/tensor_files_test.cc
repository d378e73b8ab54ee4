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

TEST(WriteNpyDir, RefusesNamesWithoutAFileNameBeforeWritingAnything) {
  TempDir dir;
  for (const std::string& bad : {std::string(), std::string(300, 'a')}) {
    auto s = WriteNpyDir(dir / "out", Set({{"fine", 1}, {bad, 2}}));
    ASSERT_FALSE(s.has_value()) << bad;
    EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

// ONNX tensor names of torch exports hold '/': each is written under its
// percent-encoded name and read back under its own when decoding.
TEST(WriteNpyDir, EncodesNamesThatAreNoFileNamesAndReadNpyDirDecodesThem) {
  TempDir dir;
  ASSERT_TRUE(WriteNpyDir(dir / "out", Set({{"/a/b", 1}, {"..", 2}, {".", 3}, {"50%", 4}})));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "out" / "%2Fa%2Fb.npy"));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "out" / "%2E%2E.npy"));
  auto decoded = ReadNpyDir(dir / "out", /*decode_names=*/true);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  EXPECT_EQ(decoded->Names(), (std::vector<std::string>{".", "..", "/a/b", "50%"}));
  auto raw = ReadNpyDir(dir / "out");
  ASSERT_TRUE(raw.has_value());
  EXPECT_EQ(raw->Names(), (std::vector<std::string>{"%2E", "%2E%2E", "%2Fa%2Fb", "50%25"}));
  // A hand-made file that decodes to a name already there is refused, not
  // silently merged.
  ASSERT_TRUE(WriteNpy(dir / "out" / "50%.npy", Tensor(DType::kFloat32, {1})));
  auto twice = ReadNpyDir(dir / "out", /*decode_names=*/true);
  ASSERT_FALSE(twice.has_value());
  EXPECT_NE(twice.error().message().find("name the same tensor '50%'"), std::string::npos) << twice.error().message();
}

TEST(TensorFileStem, EncodesSlashPercentNulAndDotNamesReversibly) {
  EXPECT_EQ(TensorFileStem("/layer1/conv/Conv_output_0"), "%2Flayer1%2Fconv%2FConv_output_0");
  EXPECT_EQ(TensorFileStem("50%"), "50%25");
  EXPECT_EQ(TensorFileStem(std::string_view("a\0b", 3)), "a%00b");
  EXPECT_EQ(TensorFileStem("."), "%2E");
  EXPECT_EQ(TensorFileStem(".."), "%2E%2E");
  EXPECT_EQ(TensorFileStem("plain.name"), "plain.name");
  for (std::string_view name : {"/a/b", "50%", "%2F", ".", "..", "x%", "%zz", "a%2"})
    EXPECT_EQ(TensorNameOfFileStem(TensorFileStem(name)), name) << name;
  EXPECT_EQ(TensorNameOfFileStem("%zz%4"), "%zz%4") << "a '%' without two hex digits stays";
  EXPECT_EQ(TensorNameOfFileStem("%61%2f"), "%61%2f") << "only the escapes TensorFileStem writes are undone";
  EXPECT_FALSE(TensorFileName("").has_value());
  EXPECT_FALSE(TensorFileName(std::string(300, 'a')).has_value());
  EXPECT_EQ(*TensorFileName("a/b"), "a%2Fb.npy");
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
