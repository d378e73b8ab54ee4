// The in-process Runner's job options (RunnerJob): intermediates of a model
// in memory exposed as the model computes them, values lent from ORT's
// buffers, the sample named in a run's errors, a job's own time limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/scratch_dir.h"
#include "core/testing/random_tensor.h"
#include "engine/runner/session_run.h"
#include "engine/runner/runner.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/graph.h"
#include "onnx/test_util.h"
#include "ort/session.h"

namespace parity {
namespace {

using testing::Intermediates;

TensorSet RandomInput(const std::string& name, const Shape& shape) {
  TensorSet s;
  s.Set(name, testing::RandomTensor(shape, 7));
  return s;
}

// What a session of the model with `names` exposed gives (the old way: a
// clone with the outputs added, serialized).
TensorSet Exposed(const Model& m, const std::vector<std::string>& names, const TensorSet& inputs) {
  auto exposed = WithExtraOutputs(m, names);
  EXPECT_TRUE(exposed) << exposed.error().message();
  auto session = CreateSession(*exposed, {}, "exposed");
  EXPECT_TRUE(session) << session.error().message();
  auto out = session->Run(inputs, names);
  EXPECT_TRUE(out) << out.error().message();
  return out ? std::move(*out) : TensorSet{};
}

void ExpectBitwiseEqual(const TensorSet& want, const TensorSet& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].name, got[i].name);
    EXPECT_TRUE(want[i].tensor.BitwiseEquals(got[i].tensor)) << want[i].name;
  }
}

TEST(SessionRunner, ExposesIntermediatesOfAModelInMemoryAsAnExposedCloneComputesThem) {
  const Model m = TransformerBlock();
  const TensorSet inputs = RandomInput("input", {1, 16, 64});
  const std::vector<std::string> names = Intermediates(m);
  ASSERT_GT(names.size(), 20u);
  ASSERT_NE(std::find(names.begin(), names.end(), "output"), names.end());  // a graph output among them
  auto runner = MakeSessionRunner({});
  auto got = runner->Run({.model = "block", .loaded = &m, .names = names}, inputs);
  ASSERT_TRUE(got) << got.error().message();
  ExpectBitwiseEqual(Exposed(m, names, inputs), *got);
  // Its healthy twin: the outputs alone, no intermediate exposed.
  auto outputs = runner->Run({.model = "block", .loaded = &m}, inputs);
  ASSERT_TRUE(outputs) << outputs.error().message();
  ExpectBitwiseEqual(Exposed(m, {"output"}, inputs), *outputs);
}

// Lent values are ORT's buffers: equal to copies, and valid after the
// runner (and its session) is gone, one session alive at a time.
TEST(SessionRunner, LentValuesEqualCopiesAndOutliveTheRunner) {
  const Model m = ConvBnRelu();
  const TensorSet inputs = RandomInput("input", {1, 3, 224, 224});
  const std::vector<std::string> names = {Intermediates(m).front(), "output"};
  ort::ResetPeakLiveSessions();
  TensorSet lent, copied;
  {
    auto runner = MakeSessionRunner({});
    auto copy = runner->Run({.model = "cbr", .loaded = &m, .names = names}, inputs);
    ASSERT_TRUE(copy) << copy.error().message();
    copied = std::move(*copy);
    auto borrowed = runner->Run(
        {.model = "cbr", .loaded = &m, .names = names, .buffers = ort::OutputBuffers::kBorrowed}, inputs);
    ASSERT_TRUE(borrowed) << borrowed.error().message();
    lent = std::move(*borrowed);
  }
  ExpectBitwiseEqual(copied, lent);
  EXPECT_EQ(ort::PeakLiveSessions(), 1);
}

TEST(SessionRunner, ARunsErrorNamesTheSampleTheJobSays) {
  const Model m = ConvBnRelu();
  auto runner = MakeSessionRunner({});
  const TensorSet wrong = RandomInput("not_input", {1, 3, 8, 8});
  auto named = runner->Run({.model = "cbr", .loaded = &m, .sample = "s7"}, wrong);
  ASSERT_FALSE(named);
  EXPECT_NE(named.error().message().find("cbr, sample 's7'"), std::string::npos) << named.error().message();
  auto unnamed = runner->Run({.model = "cbr", .loaded = &m}, wrong);
  ASSERT_FALSE(unnamed);
  EXPECT_EQ(unnamed.error().message().find("sample"), std::string::npos) << unnamed.error().message();
}

// ORT's own input (RunnerJob::source): the model with tensors exposed as
// bytes ORT parses, run as it is, gives what the same job of the model in
// memory gives; its kept session says which EP took which node on the CPU
// alone when asked (record_assignment); a plan of it is saved and kept.
TEST(SessionRunner, RunsORTsOwnInputAsItIsAndRecordsItsAssignment) {
  const Model m = TransformerBlock();
  const TensorSet inputs = RandomInput("input", {1, 16, 64});
  const std::vector<std::string> names = Intermediates(m);
  auto plain = SourceOf(m, "block");
  ASSERT_TRUE(plain) << plain.error().message();
  auto exposed = ExposedSource(m, *plain, names, "block");
  ASSERT_TRUE(exposed) << exposed.error().message();
  auto runner = MakeSessionRunner({});
  const RunnerJob job{.model = "block (exposed)", .keep_session = true, .source = &*exposed,
                      .record_assignment = true};
  ASSERT_TRUE(runner->Prepare(job));
  ASSERT_NE(runner->kept_session(), nullptr);
  EXPECT_FALSE(runner->kept_session()->ep_assignment().empty());
  RunnerJob asked = job;
  asked.names = names;
  auto got = runner->Run(asked, inputs);
  ASSERT_TRUE(got) << got.error().message();
  ExpectBitwiseEqual(Exposed(m, names, inputs), *got);
  // Its twin without the assignment asked: a CPU-only session records none.
  auto unrecorded = MakeSessionRunner({});
  ASSERT_TRUE(unrecorded->Prepare({.model = "block", .keep_session = true, .source = &*exposed}));
  EXPECT_TRUE(unrecorded->kept_session()->ep_assignment().empty());
  // A plan of it: ORT saves its optimized model (structure only, the
  // weights' side file gone) and the session is kept, as a planned session's.
  auto scratch = ScratchDir::Create("runner_plan");
  ASSERT_TRUE(scratch) << scratch.error().message();
  const RunnerJob plan_job{.model = "block", .save_plan = *scratch / "plan.onnx", .keep_session = true,
                           .source = &*plain};
  ASSERT_TRUE(runner->Prepare(plan_job));
  ASSERT_NE(runner->kept_session(), nullptr);
  EXPECT_TRUE(std::filesystem::is_regular_file(*scratch / "plan.onnx"));
  EXPECT_FALSE(std::filesystem::exists(*scratch / "plan.onnx.data"));
  const ort::Session* kept = runner->kept_session();
  auto planned = runner->Run(plan_job, inputs);
  ASSERT_TRUE(planned) << planned.error().message();
  EXPECT_EQ(runner->kept_session(), kept);  // the same session ran it
  auto bad = MakeSessionRunner({})->Run({.model = "block", .save_plan = "/nonexistent/plan.onnx", .source = &*plain},
                                        inputs);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("/nonexistent/plan.onnx"), std::string::npos) << bad.error().message();
}

// ONNX's Loop node test with a trip count of 2^40: stopped at the job's
// time limit; the same job without one, at a trip count of 5, runs.
TEST(SessionRunner, AJobsTimeLimitStopsItsRun) {
  const std::filesystem::path dir = "/usr/share/libonnx-testdata/data/node/test_loop11";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto m = Model::Load(dir / "model.onnx");
  ASSERT_TRUE(m) << m.error().message();
  auto inputs = [](int64_t trips) {
    TensorSet s;
    s.Set("trip_count", Tensor::FromVector<int64_t>(DType::kInt64, {}, {trips}));
    s.Set("cond", Tensor::FromVector<uint8_t>(DType::kBool, {}, {1}));
    s.Set("y", Tensor::FromVector<float>(DType::kFloat32, {1}, {1}));
    return s;
  };
  auto runner = MakeSessionRunner({});
  auto stopped = runner->Run({.model = "loop", .loaded = &*m, .timeout_s = 0.3}, inputs(int64_t{1} << 40));
  ASSERT_FALSE(stopped);
  EXPECT_TRUE(ort::IsRunTimeout(stopped.error())) << stopped.error().message();
  auto ran = runner->Run({.model = "loop", .loaded = &*m}, inputs(5));
  EXPECT_TRUE(ran) << ran.error().message();
}

}  // namespace
}  // namespace parity
