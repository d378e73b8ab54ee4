// BoundSession: outputs bound to parity's buffers, in place over an input
// (a shared past/present cache), or to ORT's allocator; bad bindings are
// errors, never crashes.
#include "ort/io_binding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "ort/run_limits.h"
#include "ort/test_models.h"

namespace parity::ort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ModelBuilder;

// present = ScatterElements(past[1, 4], pos[1, 1], value[1, 1], axis 1);
// total = ReduceSum(present): a one-slot cache write at `pos`.
std::string CacheWriteModel() {
  ModelBuilder m(17);
  m.Input("past", onnx::TensorProto::FLOAT, {1, 4})
      .Input("pos", onnx::TensorProto::INT64, {1, 1})
      .Input("value", onnx::TensorProto::FLOAT, {1, 1})
      .Output("present", onnx::TensorProto::FLOAT)
      .Output("total", onnx::TensorProto::FLOAT);
  testing::SetIntAttr(m.Node("ScatterElements", "write", {"past", "pos", "value"}, {"present"}), "axis", 1);
  testing::SetIntAttr(m.Node("ReduceSum", "sum", {"present"}, {"total"}), "keepdims", 0);
  return m.Bytes();
}

Tensor Floats(Shape shape, std::vector<float> values) {
  return Tensor::FromVector(DType::kFloat32, std::move(shape), values);
}

BoundSession MustCreate() {
  auto s = BoundSession::Create(ModelSource::FromBytes(CacheWriteModel()), {});
  EXPECT_TRUE(s.has_value()) << s.error().message();
  return std::move(*s);
}

TensorSet Inputs(const Tensor& past, int64_t pos, float value) {
  TensorSet in;
  in.Set("past", past);
  in.Set("pos", Tensor::FromVector(DType::kInt64, {1, 1}, std::vector<int64_t>{pos}));
  in.Set("value", Floats({1, 1}, {value}));
  return in;
}

std::vector<float> Values(const Tensor& t) {
  auto v = t.view<float>();
  return {v.begin(), v.end()};
}

TEST(BoundSession, AnOutputBoundToItsInputsMemoryIsWrittenInPlace) {
  BoundSession s = MustCreate();
  Tensor cache = Floats({1, 4}, {1, 2, 3, 4});
  TensorSet into;
  into.Set("present", cache);  // the past's own memory: past_present_share_buffer
  for (int64_t pos = 0; pos < 2; ++pos) {
    auto out = s.Run(Inputs(cache, pos, 10.0f + pos), into);
    ASSERT_TRUE(out.has_value()) << out.error().message();
    EXPECT_EQ(out->Find("present")->data(), cache.data());  // the same buffer, not a copy
  }
  EXPECT_THAT(Values(cache), ElementsAre(10, 11, 3, 4));
}

TEST(BoundSession, AnOutputNotBoundIsAllocatedByOrt) {
  BoundSession s = MustCreate();
  Tensor past = Floats({1, 4}, {1, 2, 3, 4});
  auto out = s.Run(Inputs(past, 3, 0.5f));
  ASSERT_TRUE(out.has_value()) << out.error().message();
  EXPECT_THAT(Values(*out->Find("present")), ElementsAre(1, 2, 3, 0.5f));
  EXPECT_THAT(Values(past), ElementsAre(1, 2, 3, 4));  // the input untouched
  EXPECT_FLOAT_EQ(out->Find("total")->view<float>()[0], 6.5f);
  EXPECT_THAT(s.output_names(), ElementsAre("present", "total"));
}

TEST(BoundSession, APreallocatedBufferReceivesTheOutput) {
  BoundSession s = MustCreate();
  Tensor past = Floats({1, 4}, {1, 2, 3, 4});
  Tensor present(DType::kFloat32, {1, 4});
  TensorSet into;
  into.Set("present", present);
  auto out = s.Run(Inputs(past, 1, 7.0f), into);
  ASSERT_TRUE(out.has_value()) << out.error().message();
  EXPECT_THAT(Values(present), ElementsAre(1, 7, 3, 4));
  EXPECT_THAT(Values(past), ElementsAre(1, 2, 3, 4));
}

TEST(BoundSession, ABufferOfTheWrongShapeIsAnErrorNotACrash) {
  BoundSession s = MustCreate();
  Tensor past = Floats({1, 4}, {1, 2, 3, 4});
  TensorSet into;
  into.Set("present", Tensor(DType::kFloat32, {1, 5}));
  auto out = s.Run(Inputs(past, 1, 7.0f), into);
  ASSERT_FALSE(out.has_value());
  EXPECT_FALSE(out.error().message().empty());
}

TEST(BoundSession, ABufferForANameThatIsNoOutputIsInvalidArgument) {
  BoundSession s = MustCreate();
  Tensor past = Floats({1, 4}, {1, 2, 3, 4});
  TensorSet into;
  into.Set("presnet", Tensor(DType::kFloat32, {1, 4}));
  auto out = s.Run(Inputs(past, 1, 7.0f), into);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(out.error().message(), HasSubstr("'presnet', which is no output"));
}

TEST(BoundSession, AMissingInputIsInvalidArgumentAndNothingRuns) {
  BoundSession s = MustCreate();
  TensorSet in;
  in.Set("past", Floats({1, 4}, {1, 2, 3, 4}));
  auto out = s.Run(in);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), ErrorCode::kInvalidArgument);
}

// ONNX's Loop node test (libonnx-testdata) with a trip count of 2^40: a run
// that cannot finish, stopped at the limit in force; at a trip count of 5 it
// runs. (A model that is merely slow finished inside a 0.1 ms limit on a fast
// idle CPU before the watchdog looked.)
TEST(BoundSession, ARunObeysTheTimeLimitInForce) {
  const std::filesystem::path model = "/usr/share/libonnx-testdata/data/node/test_loop11/model.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto s = BoundSession::Create(ModelSource::FromFile(model.string()), {});
  ASSERT_TRUE(s.has_value()) << s.error().message();
  auto inputs = [](int64_t trips) {
    TensorSet in;
    in.Set("trip_count", Tensor::FromVector<int64_t>(DType::kInt64, {}, {trips}));
    in.Set("cond", Tensor::FromVector<uint8_t>(DType::kBool, {}, {1}));
    in.Set("y", Tensor::FromVector<float>(DType::kFloat32, {1}, {1}));
    return in;
  };
  ASSERT_TRUE(s->Run(inputs(5)).has_value());  // no limit in force: it runs
  ScopedRunLimits limits({.seconds = 0.3});
  auto out = s->Run(inputs(int64_t{1} << 40));
  ASSERT_FALSE(out.has_value());
  EXPECT_TRUE(IsRunTimeout(out.error())) << out.error().message();
}

TEST(BoundSession, CountsAsALiveSession) {
  const int before = LiveSessions();
  {
    BoundSession s = MustCreate();
    EXPECT_EQ(LiveSessions(), before + 1);
  }
  EXPECT_EQ(LiveSessions(), before);
}

}  // namespace
}  // namespace parity::ort
