#include "engine/run/flatten_control_flow.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <optional>

#include "compare/compare_sets.h"
#include "engine/runner/session_run.h"
#include "onnx/graph.h"
#include "onnx/tensor_proto.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
const fs::path kNodeData = "/usr/share/libonnx-testdata/data/node";

struct NodeCase {
  Model model;
  Sample sample;
  TensorSet expected;
};

// ONNX's own node test `name`: its model, inputs and expected outputs.
std::optional<NodeCase> LoadCase(const std::string& name) {
  auto m = Model::Load(kNodeData / name / "model.onnx");
  if (!m) return std::nullopt;
  auto view = BuildGraphView(*m, {.infer_shapes = false});
  if (!view) return std::nullopt;
  auto data = ReadTestDataSet(kNodeData / name / "test_data_set_0", view->inputs, view->outputs);
  if (!data) return std::nullopt;
  return NodeCase{std::move(*m), {"default", std::move(data->inputs)}, std::move(data->outputs)};
}

// The copy's outputs on the sample, under the default config.
TensorSet RunCopy(const Model& m, const Sample& s) {
  auto session = CreateSession(m, {}, "copy");
  EXPECT_TRUE(session) << session.error().message();
  auto out = RunSample(*session, s, "copy");
  EXPECT_TRUE(out) << out.error().message();
  return out ? std::move(*out) : TensorSet{};
}

void ExpectSameValues(const TensorSet& want, const TensorSet& got) {
  for (const auto& [name, t] : want) {
    const Tensor* g = got.Find(name);
    ASSERT_NE(g, nullptr) << name;
    ASSERT_EQ(g->shape(), t.shape()) << name;
    ASSERT_EQ(g->byte_size(), t.byte_size()) << name;
    EXPECT_EQ(0, std::memcmp(g->data(), t.data(), t.byte_size())) << name;
  }
}

TEST(FlattenForSample, AnUnrolledLoopComputesOnnxsExpectedOutputsAndNamesEachIteration) {
  if (!fs::exists(kNodeData)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto c = LoadCase("test_loop11");
  ASSERT_TRUE(c);
  auto flat = FlattenForSample(c->model, c->sample, "test_loop11");
  ASSERT_TRUE(flat) << flat.error().message();
  EXPECT_TRUE(flat->changed);
  EXPECT_FALSE(HasControlFlow(flat->model));
  EXPECT_TRUE(flat->notes.empty());
  ExpectSameValues(c->expected, RunCopy(flat->model, c->sample));
  auto view = BuildGraphView(flat->model, {.infer_shapes = false});
  ASSERT_TRUE(view);
  const int64_t trips = c->sample.tensors.Find("trip_count")->view<int64_t>()[0];
  const auto* last = view->Producer(fmt::format("y_out@{}", trips - 1));
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(BodyNodeDescription(last->metadata), fmt::format("node 'Add_7' in Loop 'Loop_0' iteration {}", trips - 1));
  EXPECT_EQ(view->Producer(fmt::format("y_out@{}", trips)), nullptr);
}

TEST(FlattenForSample, AnIfBecomesItsTakenBranchWritingTheIfsOutput) {
  if (!fs::exists(kNodeData)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto c = LoadCase("test_if");
  ASSERT_TRUE(c);
  auto flat = FlattenForSample(c->model, c->sample, "test_if");
  ASSERT_TRUE(flat) << flat.error().message();
  ASSERT_EQ(flat->branches.size(), 1u);
  const bool then_taken = c->sample.tensors.Find("cond")->view<bool>()[0];
  EXPECT_EQ(flat->branches[0].then_branch, then_taken);
  ExpectSameValues(c->expected, RunCopy(flat->model, c->sample));
  auto view = BuildGraphView(flat->model, {.infer_shapes = false});
  ASSERT_TRUE(view);
  const auto* producer = view->Producer("res");
  ASSERT_NE(producer, nullptr);
  EXPECT_EQ(producer->op_type, "Constant");  // the branch's own node, no Identity between
  EXPECT_EQ(BodyNodeDescription(producer->metadata),
            fmt::format("node 'Constant_0' in If 'If_0' {}", then_taken ? "then_branch" : "else_branch"));
}

TEST(FlattenForSample, ALoopPastTheLimitStaysALoopAndSaysItsBodyIsNotObserved) {
  if (!fs::exists(kNodeData)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto c = LoadCase("test_loop11");
  ASSERT_TRUE(c);
  auto flat = FlattenForSample(c->model, c->sample, "test_loop11", {.limits = {.max_iterations = 2}});
  ASSERT_TRUE(flat) << flat.error().message();
  EXPECT_FALSE(flat->changed);
  EXPECT_TRUE(HasControlFlow(flat->model));
  ASSERT_EQ(flat->notes.size(), 1u);
  EXPECT_NE(flat->notes[0].find("ran more than 2 iterations, the most parity unrolls: its body"), std::string::npos);
}

TEST(FlattenForSample, AScanIsLeftWithANote) {
  if (!fs::exists(kNodeData)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto c = LoadCase("test_scan9_sum");
  ASSERT_TRUE(c);
  auto flat = FlattenForSample(c->model, c->sample, "test_scan9_sum");
  ASSERT_TRUE(flat) << flat.error().message();
  EXPECT_FALSE(flat->changed);
  ASSERT_EQ(flat->notes.size(), 1u);
  EXPECT_NE(flat->notes[0].find("does not unroll Scan"), std::string::npos);
}

TEST(ControlFlowReport, NotesEveryBranchNoSampleTook) {
  ControlFlowReport r;
  FlatModel a, b;
  a.branches = {{.node = "c", .then_branch = true}, {.node = "c", .then_branch = true}};
  b.branches = {{.node = "c", .then_branch = true}};
  AddSample(r, a);
  AddSample(r, b);
  NoteUntakenBranches(r);
  ASSERT_EQ(r.ifs.size(), 1u);
  EXPECT_EQ(r.ifs[0].then_samples, 2);  // a sample counts once per branch
  EXPECT_EQ(r.ifs[0].else_samples, 0);
  EXPECT_EQ(r.notes, std::vector<std::string>{"If 'c': no sample took its else_branch; a fault there cannot show"});
}

TEST(ControlFlowReport, CountsJudgedSamplesAndLoopsApart) {
  ControlFlowReport r;
  FlatModel judged, other;
  judged.branches = {{.node = "c", .then_branch = true}};
  judged.loops = {{.node = "l", .iterations = 0}};
  other.branches = {{.node = "c", .then_branch = false}};
  other.loops = {{.node = "l", .iterations = 3}, {.node = "l", .iterations = 2}};  // an inner Loop, twice
  AddSample(r, judged, /*judged=*/true);
  AddSample(r, other);
  ASSERT_EQ(r.ifs.size(), 1u);
  EXPECT_EQ(r.ifs[0].then_judged, 1);
  EXPECT_EQ(r.ifs[0].else_samples, 1);
  EXPECT_EQ(r.ifs[0].else_judged, 0);  // taken, never judged
  ASSERT_EQ(r.loops.size(), 1u);
  EXPECT_EQ(r.loops[0].ran_samples, 1);  // the sample that ran it, once
  EXPECT_EQ(r.loops[0].ran_judged, 0);   // the judged one ran no iteration
  EXPECT_EQ(r.loops[0].most_iterations, 3);
}

}  // namespace
}  // namespace parity
