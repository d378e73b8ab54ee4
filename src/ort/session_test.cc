// Session creation and Run: results, model facts and the errors users meet.
#include "ort/session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "core/testing/temp_dir.h"
#include "ort/test_models.h"

namespace parity::ort {
namespace {

using testing::AddModel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ModelBuilder;

RunConfig LevelConfig(OptLevel level) {
  RunConfig c;
  c.opt_level = level;
  return c;
}

Session MustCreate(const std::string& bytes, const RunConfig& config = {}) {
  auto s = Session::Create(ModelSource::FromBytes(bytes), config);
  EXPECT_TRUE(s.has_value()) << s.error().message();
  return std::move(*s);
}

TensorSet AddInputs(DType a_type = DType::kFloat32, Shape shape = {2, 3}) {
  TensorSet in;
  Tensor a(a_type, shape);
  if (a_type == DType::kFloat32) {
    auto v = a.mutable_view<float>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) - 2.5f;
  }
  in.Set("a", a);
  in.Set("b", Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {10, 20, 30, 40, 50, 60}));
  return in;
}

class SessionAtLevel : public ::testing::TestWithParam<OptLevel> {};

TEST_P(SessionAtLevel, RunsAddAndRelu) {
  Session s = MustCreate(AddModel(), LevelConfig(GetParam()));
  auto out = s.Run(AddInputs());
  ASSERT_TRUE(out.has_value()) << out.error().message();
  ASSERT_THAT(out->Names(), ElementsAre("sum", "relu"));
  EXPECT_THAT(out->Find("sum")->view<float>(), ElementsAre(7.5f, 18.5f, 29.5f, 40.5f, 51.5f, 62.5f));
  EXPECT_THAT(out->Find("relu")->view<float>(), ElementsAre(0, 0, 0, 0.5f, 1.5f, 2.5f));
  EXPECT_EQ(out->Find("sum")->shape(), (Shape{2, 3}));
}

INSTANTIATE_TEST_SUITE_P(Levels, SessionAtLevel,
                         ::testing::Values(OptLevel::kDisable, OptLevel::kBasic, OptLevel::kExtended,
                                           OptLevel::kAll));

TEST(Session, ExposesInputsAndOutputsWithSymbolicDims) {
  Session s = MustCreate(AddModel());
  ASSERT_EQ(s.inputs().size(), 2u);
  EXPECT_EQ(s.inputs()[0].name, "a");
  EXPECT_EQ(s.inputs()[0].dtype, DType::kFloat32);
  EXPECT_EQ(s.inputs()[0].shape, (Shape{-1, 3}));
  EXPECT_THAT(s.inputs()[0].dim_names, ElementsAre("batch", ""));
  EXPECT_EQ(s.inputs()[0].ToString(), "float32 [batch, 3]");
  EXPECT_THAT(s.output_names(), ElementsAre("sum", "relu"));
  EXPECT_GT(s.creation_ms(), 0.0);
}

TEST(Session, LoadsFromFile) {
  const parity::testing::TempDir dir("parity_ort_session_test");
  const auto path = dir / "add.onnx";
  std::ofstream(path, std::ios::binary) << AddModel();
  auto s = Session::Create(ModelSource::FromFile(path.string()), {});
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_TRUE(s->Run(AddInputs()).has_value());
}

TEST(Session, RunsSelectedOutputsInRequestedOrder) {
  Session s = MustCreate(AddModel());
  auto out = s.Run(AddInputs(), {"relu"});
  ASSERT_TRUE(out.has_value()) << out.error().message();
  EXPECT_THAT(out->Names(), ElementsAre("relu"));
}

TEST(Session, IsMovableAndRunsConcurrently) {
  Session first = MustCreate(AddModel(), LevelConfig(OptLevel::kAll));
  Session s = std::move(first);
  const TensorSet in = AddInputs();
  std::vector<std::thread> threads;
  // One element per thread, each its own byte: std::vector<bool> packs bits,
  // and four threads writing bits of one word race.
  std::vector<char> ok(4, false);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        auto out = s.Run(in);
        ok[t] = out.has_value() && out->Find("sum")->view<float>()[0] == 7.5f;
        if (!ok[t]) return;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_THAT(ok, ::testing::Each(static_cast<char>(true)));
}

TEST(SessionRun, RejectsWrongInputNameNamingIt) {
  Session s = MustCreate(AddModel());
  TensorSet in = AddInputs();
  in.Set("c", Tensor(DType::kFloat32, {2, 3}));
  auto out = s.Run(in);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(out.error().ExitCode(), 2);
  EXPECT_THAT(out.error().message(), HasSubstr("unknown input 'c' (model inputs: a, b)"));
}

TEST(SessionRun, RejectsMissingInput) {
  Session s = MustCreate(AddModel());
  TensorSet in;
  in.Set("a", Tensor(DType::kFloat32, {2, 3}));
  auto out = s.Run(in);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(out.error().message(), HasSubstr("missing input 'b' (float32 [batch, 3])"));
}

TEST(SessionRun, RejectsWrongDtypeNamingInput) {
  Session s = MustCreate(AddModel());
  auto out = s.Run(AddInputs(DType::kFloat64));
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(out.error().message(), HasSubstr("input 'a': expected float32, given float64"));
}

TEST(SessionRun, RejectsWrongRankNamingInput) {
  Session s = MustCreate(AddModel());
  auto out = s.Run(AddInputs(DType::kFloat32, {6}));
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(out.error().message(), HasSubstr("input 'a': expected rank 2 [batch, 3], given rank 1 [6]"));
}

TEST(SessionRun, RejectsWrongFixedDim) {
  Session s = MustCreate(AddModel());
  auto out = s.Run(AddInputs(DType::kFloat32, {3, 2}));
  ASSERT_FALSE(out.has_value());
  EXPECT_THAT(out.error().message(), HasSubstr("input 'a': dimension 1 expected 3, given 2"));
}

TEST(SessionRun, AcceptsAnyShapeWhenTheModelStatesNone) {
  ModelBuilder m;
  m.InputWithoutShape("x", onnx::TensorProto::FLOAT).Output("y", onnx::TensorProto::FLOAT);
  m.Node("Identity", "identity", {"x"}, {"y"});
  Session s = MustCreate(m.Bytes());
  EXPECT_FALSE(s.inputs()[0].rank_known);
  EXPECT_EQ(s.inputs()[0].ToString(), "float32 [...]");
  TensorSet in;
  in.Set("x", Tensor::FromVector<float>(DType::kFloat32, {2, 2}, {1, 2, 3, 4}));
  auto out = s.Run(in);
  ASSERT_TRUE(out.has_value()) << out.error().message();
  EXPECT_EQ(out->Find("y")->shape(), (Shape{2, 2}));
}

TEST(SessionRun, BorrowedOutputsAreTheCopiedOnesBitForBit) {
  Session s = MustCreate(AddModel());
  auto copied = s.Run(AddInputs());
  auto borrowed = s.Run(AddInputs(), {}, OutputBuffers::kBorrowed);
  ASSERT_TRUE(copied && borrowed);
  ASSERT_EQ(borrowed->Names(), copied->Names());
  for (const auto& [name, t] : *copied) EXPECT_TRUE(t.BitwiseEquals(*borrowed->Find(name))) << name;
}

// An output ORT may serve from the session's own memory (an initializer
// through Identity, the initializer itself): the borrowed tensor holds the
// session until it goes, so its bytes stay valid after the Session object.
TEST(SessionRun, ABorrowedOutputKeepsItsSessionUntilItGoes) {
  ModelBuilder m;
  m.Input("x", onnx::TensorProto::FLOAT, {4})
      .FloatInit("w", {4}, {1.5f, -2.0f, 3.25f, 4.0f})
      .Output("y", onnx::TensorProto::FLOAT)
      .Output("w_id", onnx::TensorProto::FLOAT)
      .Output("w", onnx::TensorProto::FLOAT);
  m.Node("Add", "add", {"x", "w"}, {"y"});
  m.Node("Identity", "id", {"w"}, {"w_id"});
  const int before = LiveSessions();
  std::optional<TensorSet> out;
  {
    Session s = MustCreate(m.Bytes());
    TensorSet in;
    in.Set("x", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 1, 1}));
    auto run = s.Run(in, {}, OutputBuffers::kBorrowed);
    ASSERT_TRUE(run) << run.error().message();
    out = std::move(*run);
  }
  EXPECT_EQ(LiveSessions(), before + 1);  // the Session object is gone, its ORT session is not
  EXPECT_THAT(out->Find("y")->view<float>(), ElementsAre(2.5f, -1.0f, 4.25f, 5.0f));
  EXPECT_THAT(out->Find("w_id")->view<float>(), ElementsAre(1.5f, -2.0f, 3.25f, 4.0f));
  EXPECT_THAT(out->Find("w")->view<float>(), ElementsAre(1.5f, -2.0f, 3.25f, 4.0f));
  const Tensor kept = out->Find("w")->Copy();
  out.reset();
  EXPECT_EQ(LiveSessions(), before);
  EXPECT_THAT(kept.view<float>(), ElementsAre(1.5f, -2.0f, 3.25f, 4.0f));
}

TEST(SessionRun, RejectsUnknownOutput) {
  Session s = MustCreate(AddModel());
  auto out = s.Run(AddInputs(), {"nope"});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(out.error().message(), HasSubstr("unknown output 'nope' (model outputs: sum, relu)"));
}

TEST(SessionRun, OrtFailureDuringRunIsRuntimeErrorNamingNode) {
  // Reshape to [5] cannot take 4 elements: ORT fails inside the kernel.
  ModelBuilder m;
  m.Input("x", onnx::TensorProto::FLOAT, {"n"})
      .Int64Init("shape", {1}, {5})
      .Output("y", onnx::TensorProto::FLOAT);
  m.Node("Reshape", "the_reshape", {"x", "shape"}, {"y"});
  Session s = MustCreate(m.Bytes());
  TensorSet in;
  in.Set("x", Tensor(DType::kFloat32, {4}));
  auto out = s.Run(in);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), ErrorCode::kRuntime);
  EXPECT_THAT(out.error().message(), HasSubstr("the_reshape"));
  EXPECT_NE(out.error().message().back(), '\n');
}

TEST(SessionCreate, MalformedBytesAreInvalidArgument) {
  auto s = Session::Create(ModelSource::FromBytes("this is not a protobuf \x01\x02\xff"), {});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(s.error().message().empty());
}

TEST(SessionCreate, TruncatedModelIsAnErrorNotACrash) {
  const std::string bytes = AddModel();
  auto s = Session::Create(ModelSource::FromBytes(bytes.substr(0, bytes.size() / 2)), {});
  EXPECT_FALSE(s.has_value());
}

TEST(SessionCreate, MissingFileIsNotFound) {
  auto s = Session::Create(ModelSource::FromFile("/nonexistent/model.onnx"), {});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(s.error().message(), HasSubstr("/nonexistent/model.onnx"));
}

TEST(SessionCreate, UnknownOperatorIsAnInvalidModel) {
  ModelBuilder m;
  m.Input("x", onnx::TensorProto::FLOAT, {2}).Output("y", onnx::TensorProto::FLOAT);
  m.Node("NoSuchOp", "mystery", {"x"}, {"y"});
  auto s = Session::Create(ModelSource::FromBytes(m.Bytes()), {});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message(), HasSubstr("NoSuchOp"));
}

TEST(SessionCreate, UnavailableProviderIsUnsupportedListingAvailableOnes) {
  RunConfig c;
  c.providers = {"cuda", "cpu"};
  auto s = Session::Create(ModelSource::FromBytes(AddModel()), c);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kUnsupported);
  EXPECT_THAT(s.error().message(), HasSubstr("'cuda' (CUDAExecutionProvider) is not available"));
  EXPECT_THAT(s.error().message(), HasSubstr("available: cpu (CPUExecutionProvider)"));
}

TEST(SessionCreate, UnknownProviderIsInvalidArgument) {
  RunConfig c;
  c.providers = {"gpu"};
  auto s = Session::Create(ModelSource::FromBytes(AddModel()), c);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message(), HasSubstr("unknown execution provider 'gpu'; known: cpu, cuda"));
}

TEST(SessionCreate, AppliesThreadsModeAndSessionEntries) {
  RunConfig c = LevelConfig(OptLevel::kAll);
  c.intra_op_threads = 1;
  c.inter_op_threads = 1;
  c.parallel_execution = true;
  c.session_entries["session.intra_op.allow_spinning"] = "0";
  Session s = MustCreate(AddModel(), c);
  EXPECT_TRUE(s.Run(AddInputs()).has_value());
}

}  // namespace
}  // namespace parity::ort
