#include "engine/run/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "core/testing/random_tensor.h"
#include "engine/runner/session_run.h"
#include "onnx/builder.h"
#include "onnx/builtin_models.h"
#include "onnx/graph.h"
#include "onnx/test_util.h"

namespace parity {
namespace {

using testing::Intermediates;

Sample RandomSample(const std::string& input, const Shape& shape, uint32_t seed = 1) {
  Sample s{"default", {}};
  EXPECT_TRUE(s.tensors.Add(input, testing::RandomTensor(shape, seed)));
  return s;
}

TraceOptions Batched(int64_t bytes) {
  TraceOptions o;
  o.max_batch_bytes = bytes;
  return o;
}

struct Collected {
  std::vector<std::string> order;
  TensorSet values;
};

Result<Collected> TraceAll(Tracer& tracer, const Sample& sample) {
  Collected c;
  auto outputs = tracer.Trace(sample, [&](const std::string& name, const Tensor& t) -> Status {
    c.order.push_back(name);
    return c.values.Add(name, t);
  });
  if (!outputs) return std::unexpected(outputs.error());
  return c;
}

TEST(Tracer, DeliversEveryObservedTensorInTheGivenOrderInOneBatch) {
  Model m = ResidualCnn();
  auto names = Intermediates(m);
  // ResidualCnn (builtin_models.cc): its 15 Convs, 15 BatchNormalizations and
  // 14 Relus alone give 44 intermediates, so the one batch holds many tensors.
  ASSERT_GT(names.size(), 40u);
  auto tracer = Tracer::Create(m, RunConfig{}, names, "residual");
  ASSERT_TRUE(tracer) << tracer.error().message();
  EXPECT_EQ(tracer->batches().size(), 1u);
  auto c = TraceAll(*tracer, RandomSample("input", {1, 3, 64, 64}));
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->order, names);  // the graph output is among them: not delivered twice
}

TEST(Tracer, BatchedRunsGiveBitwiseTheSameTensorsAsOneRun) {
  Model m = ResidualCnn();
  auto names = Intermediates(m);
  Sample sample = RandomSample("input", {1, 3, 64, 64});
  auto whole = Tracer::Create(m, RunConfig{}, names, "residual");
  auto batched = Tracer::Create(m, RunConfig{}, names, "residual", Batched(200 << 10));
  ASSERT_TRUE(whole && batched);
  // The stem's three 16x64x64 float32 outputs are 256 KiB each, over the 200 KiB budget alone.
  ASSERT_GT(batched->batches().size(), 3u);
  size_t total = 0;
  for (size_t b = 0; b < batched->batches().size(); ++b) {
    total += batched->batches()[b].size();
    if (batched->batches()[b].size() == 1) continue;  // a tensor above the limit gets a batch alone
    EXPECT_LE(batched->batch_bytes()[b], 200 << 10);
  }
  EXPECT_EQ(total, names.size());
  auto a = TraceAll(*whole, sample);
  auto b = TraceAll(*batched, sample);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->order, b->order);
  for (const auto& [name, t] : a->values) EXPECT_TRUE(t.BitwiseEquals(*b->values.Find(name))) << name;
}

TEST(Tracer, ReturnsTheModelOutputsAndDeliversUnobservedOutputsLast) {
  Model m = ConvBnRelu();
  auto tracer = Tracer::Create(m, RunConfig{}, {"input"}, "cbr");
  ASSERT_TRUE(tracer);
  Sample sample = RandomSample("input", {1, 3, 224, 224});
  Collected c;
  auto outputs = tracer->Trace(sample, [&](const std::string& name, const Tensor& t) -> Status {
    c.order.push_back(name);
    return {};
  });
  ASSERT_TRUE(outputs) << outputs.error().message();
  EXPECT_EQ(c.order, (std::vector<std::string>{"input", "output"}));
  ASSERT_EQ(outputs->size(), 1u);
  auto session = CreateSession(m, RunConfig{}, "cbr");
  ASSERT_TRUE(session);
  auto plain = RunSample(*session, sample, "cbr");
  ASSERT_TRUE(plain);
  EXPECT_TRUE((*outputs)[0].tensor.BitwiseEquals((*plain)[0].tensor));
}

// Whole batches, in the tracer's order; what Trace returns is copied out of
// ORT's buffers, so it holds no session once the tracer is gone.
TEST(Tracer, HandsOverWholeBatchesAndReturnsOutputsThatHoldNoSession) {
  Model m = ResidualCnn();
  auto names = Intermediates(m);
  Sample sample = RandomSample("input", {1, 3, 64, 64});
  const int before = ort::LiveSessions();
  std::optional<TensorSet> outputs;
  std::vector<std::string> order;
  {
    auto tracer = Tracer::Create(m, RunConfig{}, names, "residual", Batched(200 << 10));
    ASSERT_TRUE(tracer) << tracer.error().message();
    std::vector<size_t> sizes;
    auto traced = tracer->TraceBatches(sample, [&](const std::vector<NamedTensor>& batch) -> Status {
      sizes.push_back(batch.size());
      for (const auto& [name, t] : batch) order.push_back(name);
      return {};
    });
    ASSERT_TRUE(traced) << traced.error().message();
    outputs = std::move(*traced);
    ASSERT_EQ(sizes.size(), tracer->batches().size());
    for (size_t b = 0; b < sizes.size(); ++b) EXPECT_EQ(sizes[b], tracer->batches()[b].size()) << "batch " << b;
  }
  EXPECT_EQ(order, names);
  EXPECT_EQ(ort::LiveSessions(), before);
  auto session = CreateSession(m, RunConfig{}, "residual");
  ASSERT_TRUE(session);
  auto plain = RunSample(*session, sample, "residual");
  ASSERT_TRUE(plain && outputs->size() == plain->size());
  EXPECT_TRUE((*outputs)[0].tensor.BitwiseEquals((*plain)[0].tensor));
}

// One batch's session at a time, even when a graph output is observed in an
// early batch (the tensors handed over are ORT's buffers, which hold their
// session): the memory bound of batching.
TEST(Tracer, HoldsOneBatchSessionAtATimeWhenAnOutputComesEarly) {
  Model m = ResidualCnn();
  auto names = Intermediates(m);
  std::reverse(names.begin(), names.end());  // the graph output first
  auto tracer = Tracer::Create(m, RunConfig{}, names, "residual", Batched(200 << 10));
  ASSERT_TRUE(tracer) << tracer.error().message();
  ASSERT_GT(tracer->batches().size(), 3u);
  const int before = ort::LiveSessions();
  std::vector<int> live;
  auto traced = tracer->TraceBatches(RandomSample("input", {1, 3, 64, 64}), [&](const std::vector<NamedTensor>&) {
    live.push_back(ort::LiveSessions());
    return Status{};
  });
  ASSERT_TRUE(traced) << traced.error().message();
  EXPECT_EQ(live, std::vector<int>(tracer->batches().size(), before + 1));
  EXPECT_EQ(ort::LiveSessions(), before);
}

TEST(Tracer, RefusesATensorNoNodeProduces) {
  auto tracer = Tracer::Create(ConvBnRelu(), RunConfig{}, {"no_such_tensor"}, "cbr");
  ASSERT_FALSE(tracer);
  EXPECT_EQ(tracer.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(tracer.error().message().find("no_such_tensor"), std::string::npos);
}

TEST(Tracer, RefusesARepeatedTensor) {
  Model m = ConvBnRelu();
  auto names = Intermediates(m);
  names.push_back(names[0]);
  auto tracer = Tracer::Create(m, RunConfig{}, names, "cbr");
  ASSERT_FALSE(tracer);
  EXPECT_EQ(tracer.error().code(), ErrorCode::kInvalidArgument);
}

TEST(Tracer, ASinkErrorStopsTheTrace) {
  Model m = ResidualCnn();
  auto tracer = Tracer::Create(m, RunConfig{}, Intermediates(m), "residual", Batched(100 << 10));
  ASSERT_TRUE(tracer);
  int calls = 0;
  auto outputs = tracer->Trace(RandomSample("input", {1, 3, 64, 64}), [&](const std::string&, const Tensor&) -> Status {
    if (++calls == 3) return Corrupt("disk full");
    return {};
  });
  ASSERT_FALSE(outputs);
  EXPECT_EQ(calls, 3);
  EXPECT_NE(outputs.error().message().find("disk full"), std::string::npos);
}

TEST(Tracer, ARunErrorNamesTheSample) {
  Model m = ConvBnRelu();
  auto tracer = Tracer::Create(m, RunConfig{}, Intermediates(m), "cbr");
  ASSERT_TRUE(tracer);
  Sample wrong = RandomSample("input", {1, 4, 224, 224});
  wrong.name = "typical";
  auto outputs = tracer->Trace(wrong, [](const std::string&, const Tensor&) -> Status { return {}; });
  ASSERT_FALSE(outputs);
  EXPECT_NE(outputs.error().message().find("typical"), std::string::npos);
}

TEST(EstimateTensorBytes, ResolvesSymbolicDimsFromTheInputShapes) {
  ModelBuilder b;
  auto x = b.Input("x", DType::kFloat32, Shape{-1, 8});
  auto y = b.Relu(x);
  b.Output(b.Relu(y), "y");
  auto m = b.Build();
  ASSERT_TRUE(m) << m.error().message();
  auto unknown = EstimateTensorBytes(*m, {y}, {});
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_FALSE(unknown[0].has_value());
  auto known = EstimateTensorBytes(*m, {y, "x"}, {{"x", {5, 8}}});
  ASSERT_TRUE(known[0] && known[1]);
  EXPECT_EQ(*known[0], 5 * 8 * 4);
  EXPECT_EQ(*known[1], 5 * 8 * 4);
}

}  // namespace
}  // namespace parity
