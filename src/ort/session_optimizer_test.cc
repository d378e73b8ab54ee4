// What parity observes about ORT's graph optimization: the optimizer log,
// switching an optimizer off, the saved optimized model, and profiling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/testing/temp_dir.h"
#include "ort/session.h"
#include "ort/test_models.h"

namespace parity::ort {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

using parity::testing::TempDir;

std::vector<std::string> OpTypes(const fs::path& model_path) {
  onnx::ModelProto model;
  std::ifstream in(model_path, std::ios::binary);
  EXPECT_TRUE(model.ParseFromIstream(&in)) << model_path;
  std::vector<std::string> ops;
  for (const auto& node : model.graph().node()) ops.push_back(node.op_type());
  return ops;
}

Result<Session> CreateCapturing(const std::string& bytes, const RunConfig& config) {
  SessionExtras extras;
  extras.capture_optimizer_log = true;
  return Session::Create(ModelSource::FromBytes(bytes), config, extras);
}

RunConfig Config(OptLevel level) {
  RunConfig c;
  c.opt_level = level;
  return c;
}

TEST(OptimizerCapture, ListsConvActivationFusionForConvRelu) {
  auto s = CreateCapturing(testing::ConvReluModel(), Config(OptLevel::kExtended));
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_THAT(s->modified_optimizers(), Contains("ConvActivationFusion"));
  EXPECT_THAT(s->optimizer_log(),
              Contains("GraphTransformer ConvActivationFusion modified: 1 with status: OK"));
}

TEST(OptimizerCapture, ListsNchwcTransformerAtAll) {
  auto s = CreateCapturing(testing::ConvReluModel(), Config(OptLevel::kAll));
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_THAT(s->modified_optimizers(), Contains("ConvActivationFusion"));
  EXPECT_THAT(s->modified_optimizers(), Contains("NchwcTransformer"));
}

TEST(OptimizerCapture, ListsMatMulAddFusionAtBasic) {
  auto s = CreateCapturing(testing::MatMulAddModel(), Config(OptLevel::kBasic));
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_THAT(s->modified_optimizers(), Contains("MatMulAddFusion"));
}

TEST(OptimizerCapture, NothingIsModifiedAtDisable) {
  auto s = CreateCapturing(testing::ConvReluModel(), Config(OptLevel::kDisable));
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_TRUE(s->modified_optimizers().empty());
}

TEST(OptimizerCapture, IsEmptyWhenNotRequested) {
  auto s = Session::Create(ModelSource::FromBytes(testing::ConvReluModel()), Config(OptLevel::kAll));
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_TRUE(s->optimizer_log().empty());
  EXPECT_TRUE(s->modified_optimizers().empty());
}

TEST(OptimizerCapture, ConcurrentSessionsKeepTheirOwnLines) {
  // Each session's lines carry its own log id, so captures do not mix.
  std::optional<Result<Session>> conv, matmul;
  std::thread a([&] { conv = CreateCapturing(testing::ConvReluModel(), Config(OptLevel::kExtended)); });
  std::thread b([&] { matmul = CreateCapturing(testing::MatMulAddModel(), Config(OptLevel::kExtended)); });
  a.join();
  b.join();
  ASSERT_TRUE(conv->has_value() && matmul->has_value());
  EXPECT_THAT((*conv)->modified_optimizers(), Not(Contains("MatMulAddFusion")));
  EXPECT_THAT((*matmul)->modified_optimizers(), Not(Contains("ConvActivationFusion")));
  EXPECT_THAT((*matmul)->modified_optimizers(), Contains("MatMulAddFusion"));
}

TEST(OptimizedModel, IsSavedWithFusedNodes) {
  TempDir dir;
  RunConfig c = Config(OptLevel::kExtended);
  c.optimized_model_path = (dir / "opt.onnx").string();
  auto s = Session::Create(ModelSource::FromBytes(testing::ConvReluModel()), c);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  ASSERT_TRUE(fs::exists(c.optimized_model_path));
  const auto ops = OpTypes(c.optimized_model_path);
  EXPECT_THAT(ops, Contains("FusedConv"));
  EXPECT_THAT(ops, Not(Contains("Relu")));
  // Written to a temp name and renamed: only the model is left.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  EXPECT_THAT(names, ElementsAre("opt.onnx"));
}

TEST(OptimizedModel, IntoAMissingDirectoryIsAnErrorNamingIt) {
  TempDir dir;
  RunConfig c = Config(OptLevel::kExtended);
  c.optimized_model_path = (dir / "no_such_dir" / "opt.onnx").string();
  auto s = Session::Create(ModelSource::FromBytes(testing::ConvReluModel()), c);
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message(), HasSubstr("no_such_dir"));
}

TEST(DisabledOptimizers, SwitchOffTheNamedFusion) {
  TempDir dir;
  RunConfig c = Config(OptLevel::kExtended);
  c.disabled_optimizers = {"ConvActivationFusion"};
  c.optimized_model_path = (dir / "opt.onnx").string();
  auto s = CreateCapturing(testing::ConvReluModel(), c);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_THAT(s->modified_optimizers(), Not(Contains("ConvActivationFusion")));
  const auto ops = OpTypes(c.optimized_model_path);
  EXPECT_THAT(ops, Contains("Conv"));
  EXPECT_THAT(ops, Contains("Relu"));
  EXPECT_THAT(ops, Not(Contains("FusedConv")));
}

TEST(DisabledOptimizers, MergeWithAnExplicitSessionEntry) {
  RunConfig c = Config(OptLevel::kExtended);
  c.disabled_optimizers = {"ConvActivationFusion"};
  c.session_entries["optimization.disable_specified_optimizers"] = "MatMulAddFusion";
  auto conv = CreateCapturing(testing::ConvReluModel(), c);
  auto matmul = CreateCapturing(testing::MatMulAddModel(), c);
  ASSERT_TRUE(conv.has_value() && matmul.has_value());
  EXPECT_THAT(conv->modified_optimizers(), Not(Contains("ConvActivationFusion")));
  EXPECT_THAT(matmul->modified_optimizers(), Not(Contains("MatMulAddFusion")));
}

TEST(DisabledOptimizers, CommaSeparatedEntryDisablesEveryName) {
  // ORT 1.29 parses only ';' here although it documents ','; parity accepts
  // both and hands ORT ';'.
  RunConfig c = Config(OptLevel::kExtended);
  c.session_entries["optimization.disable_specified_optimizers"] = "ConvActivationFusion, MatMulAddFusion";
  auto conv = CreateCapturing(testing::ConvReluModel(), c);
  auto matmul = CreateCapturing(testing::MatMulAddModel(), c);
  ASSERT_TRUE(conv.has_value() && matmul.has_value());
  EXPECT_THAT(conv->modified_optimizers(), Not(Contains("ConvActivationFusion")));
  EXPECT_THAT(matmul->modified_optimizers(), Not(Contains("MatMulAddFusion")));
}

TEST(DisabledOptimizers, FusedAndUnfusedAgreeOnConvRelu) {
  RunConfig fused = Config(OptLevel::kAll);
  RunConfig unfused = Config(OptLevel::kAll);
  unfused.disabled_optimizers = {"ConvActivationFusion", "NchwcTransformer"};
  TensorSet in;
  Tensor x(DType::kFloat32, {1, 2, 5, 5});
  auto v = x.mutable_view<float>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) - 3.0f;
  in.Set("x", x);
  auto a = Session::Create(ModelSource::FromBytes(testing::ConvReluModel()), fused)->Run(in);
  auto b = Session::Create(ModelSource::FromBytes(testing::ConvReluModel()), unfused)->Run(in);
  ASSERT_TRUE(a.has_value() && b.has_value());
  const auto ya = a->Find("y")->view<float>();
  const auto yb = b->Find("y")->view<float>();
  ASSERT_EQ(ya.size(), 4u * 3 * 3);  // ConvReluModel: 4 filters of 3x3 over a 5x5 input, no padding
  for (size_t i = 0; i < ya.size(); ++i) EXPECT_NEAR(ya[i], yb[i], 1e-5f) << i;
}

TEST(Profiling, WritesAJsonProfile) {
  TempDir dir;
  SessionExtras extras;
  extras.profile_prefix = (dir / "prof").string();
  auto s = Session::Create(ModelSource::FromBytes(testing::AddModel()), {}, extras);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  TensorSet in;
  in.Set("a", Tensor::FromVector<float>(DType::kFloat32, {1, 3}, {1, 2, 3}));
  in.Set("b", Tensor::FromVector<float>(DType::kFloat32, {1, 3}, {1, 2, 3}));
  ASSERT_TRUE(s->Run(in).has_value());
  auto path = s->EndProfiling();
  ASSERT_TRUE(path.has_value()) << path.error().message();
  EXPECT_THAT(*path, HasSubstr("prof"));
  EXPECT_TRUE(fs::exists(*path)) << *path;
  EXPECT_FALSE(s->EndProfiling().has_value());  // already ended
}

TEST(Profiling, EndingWithoutProfilingIsAnError) {
  auto s = Session::Create(ModelSource::FromBytes(testing::AddModel()), {});
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->EndProfiling().has_value());
}

}  // namespace
}  // namespace parity::ort
