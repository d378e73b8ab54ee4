#include "engine/load/samples.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/npz.h"
#include "core/testing/random_tensor.h"
#include "core/testing/temp_dir.h"
#include "onnx/builder.h"
#include "onnx/test_util.h"

namespace parity {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

using testing::F32;

using testing::ReluModel;

Model NoInputModel() {
  ModelBuilder b;
  b.Output(b.Identity(b.Constant(F32({2}, {1, 2}))), "y");
  auto m = b.Build();
  EXPECT_TRUE(m.has_value());
  return std::move(*m);
}

std::filesystem::path Npz(const TempDir& dir, const std::string& name, const TensorSet& tensors) {
  const auto path = dir / name;
  EXPECT_TRUE(WriteNpz(path, tensors).has_value());
  return path;
}

TEST(LoadSamplesFor, BindsAndReturnsEverySampleInFileOrder) {
  TempDir dir;
  TensorSet t;
  ASSERT_TRUE(t.Add("a/x", F32({1, 2}, {1, 2})));
  ASSERT_TRUE(t.Add("b/x", F32({1, 2}, {3, 4})));
  auto samples = LoadSamplesFor(ReluModel(), Npz(dir, "s.npz", t));
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0].name, "a");
  EXPECT_EQ((*samples)[1].name, "b");
}

TEST(LoadSamplesFor, PicksTheNamedSample) {
  TempDir dir;
  TensorSet t;
  ASSERT_TRUE(t.Add("a/x", F32({1, 2}, {1, 2})));
  ASSERT_TRUE(t.Add("b/x", F32({1, 2}, {3, 4})));
  auto samples = LoadSamplesFor(ReluModel(), Npz(dir, "s.npz", t), {.sample = "b"});
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ(samples->front().name, "b");
}

TEST(LoadSamplesFor, UnknownSampleIsNotFoundNamingTheFileAndTheSamples) {
  TempDir dir;
  TensorSet t;
  ASSERT_TRUE(t.Add("a/x", F32({1, 2}, {1, 2})));
  ASSERT_TRUE(t.Add("b/x", F32({1, 2}, {3, 4})));
  const auto path = Npz(dir, "s.npz", t);
  auto samples = LoadSamplesFor(ReluModel(), path, {.sample = "c"});
  ASSERT_FALSE(samples.has_value());
  EXPECT_EQ(samples.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(samples.error().message(), path.string() + ": no sample named 'c' (samples: a, b)");
}

TEST(LoadSamplesFor, EmptyFileIsRefusedForAModelWithInputs) {
  TempDir dir;
  const auto path = Npz(dir, "empty.npz", {});
  auto samples = LoadSamplesFor(ReluModel(), path);
  ASSERT_FALSE(samples.has_value());
  EXPECT_EQ(samples.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(samples.error().message(), path.string() + ": no tensors");
}

TEST(LoadSamplesFor, EmptyFileIsOneEmptySampleForAModelWithoutInputs) {
  TempDir dir;
  auto samples = LoadSamplesFor(NoInputModel(), Npz(dir, "empty.npz", {}));
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ(samples->front().name, "default");
  EXPECT_EQ(samples->front().tensors.size(), 0u);
}

TEST(LoadSamplesFor, MissingInputIsInvalidArgumentNamingTheFileAndTheInput) {
  TempDir dir;
  TensorSet t;
  ASSERT_TRUE(t.Add("z", F32({1, 2}, {1, 2})));
  const auto path = Npz(dir, "wrong.npz", t);
  auto samples = LoadSamplesFor(ReluModel(), path, {.model_label = "relu.onnx"});
  ASSERT_FALSE(samples.has_value());
  EXPECT_EQ(samples.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(samples.error().message(), HasSubstr(path.string()));
  EXPECT_THAT(samples.error().message(), HasSubstr("'x'"));
}

TEST(LoadSamplesFor, UnreadableFileIsAnErrorNamingIt) {
  auto samples = LoadSamplesFor(ReluModel(), "/nonexistent/samples.npz");
  ASSERT_FALSE(samples.has_value());
  EXPECT_THAT(samples.error().message(), HasSubstr("/nonexistent/samples.npz"));
}

}  // namespace
}  // namespace parity
