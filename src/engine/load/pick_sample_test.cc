#include "engine/load/pick_sample.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/npz.h"
#include "core/testing/temp_dir.h"
#include "onnx/builder.h"
#include "onnx/test_util.h"

namespace parity {
namespace {

using ::testing::HasSubstr;

using testing::ReluModel;

Tensor F32(const std::vector<float>& v) { return Tensor::FromVector(DType::kFloat32, Shape{1, 2}, v); }

TEST(PickSample, WithoutInputsGeneratesTheTypicalSampleAndSaysSo) {
  std::vector<std::string> notes;
  auto s = PickSample(ReluModel(), {.model_label = "m.onnx", .seed = 7},
                      [&](std::string_view n) { notes.emplace_back(n); });
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_TRUE(s->tensors.Contains("x"));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("seed 7"));
}

TEST(PickSample, TheSampleFlagsErrorOnlyWhenASampleIsGenerated) {
  const Result<SampleGenOptions> bad = InvalidArgument("--min-size must be >= 0");
  auto generated = PickSample(ReluModel(), {.model_label = "m.onnx", .gen = bad});
  ASSERT_FALSE(generated.has_value());
  EXPECT_THAT(generated.error().message(), HasSubstr("--min-size"));

  testing::TempDir dir;
  const auto npz = dir.path() / "in.npz";
  TensorSet x;
  x.Set("x", F32({1, -1}));
  ASSERT_TRUE(WriteNpz(npz, x).has_value());
  std::vector<std::string> notes;
  auto loaded = PickSample(ReluModel(), {.inputs = npz.string(), .model_label = "m.onnx", .gen = bad},
                           [&](std::string_view n) { notes.emplace_back(n); });
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  EXPECT_TRUE(notes.empty());  // one sample, chosen by the user: nothing to say
}

}  // namespace
}  // namespace parity
