// Locate on a graph with more surviving tensors than one observed run may
// expose (LocateOptions::max_observed): the first divergence is searched in
// rounds (docs/locate.md "Long graphs") and found exactly on a chain, wherever
// the fault sits, with a bounded number of tensors observed.
#include <gtest/gtest.h>

#include <string>

#include "engine/locate/locate.h"
#include "onnx/builder.h"

namespace parity {
namespace {

// x -> Relu ... Relu -> y with node `fault` an Add of `c` (0 in the reference);
// the last node is a Relu whose output is y.
Model Chain(int nodes, int fault, float c) {
  ModelBuilder b;
  std::string x = b.Input("x", DType::kFloat32, {1, 4});
  const std::string k = b.ConstWeight("c", {1, 4}, c);
  for (int i = 0; i < nodes; ++i) x = i == fault ? b.Add(x, k) : b.Relu(x);
  b.Output(x, "y");
  auto m = b.Build();
  EXPECT_TRUE(m) << m.error().message();
  return m ? std::move(*m) : Model();
}

Sample Positive() {
  Tensor t(DType::kFloat32, {1, 4});
  for (float& v : t.mutable_view<float>()) v = 0.5f;
  Sample s{.name = "typical", .tensors = {}};
  s.tensors.Set("x", std::move(t));
  return s;
}

TEST(LocateRounds, ALongChainIsSearchedInRoundsAndItsFirstDivergenceFoundExactly) {
  constexpr int kNodes = 1000;
  LocateOptions o;
  o.ablation = false;
  o.drilldown = false;
  o.target.intra_op_threads = 1;
  o.reference.intra_op_threads = 1;
  o.max_observed = 16;
  for (int fault : {0, 1, 17, 500, 997, 998}) {
    const Model reference = Chain(kNodes, fault, 0.0f);
    const Model target = Chain(kNodes, fault, 1.0f);
    auto report = Locate(reference, &target, Positive(), o);
    ASSERT_TRUE(report) << report.error().message();
    ASSERT_TRUE(report->first_divergence) << "fault at " << fault;
    // The fault's output is the first tensor that departs.
    const std::string& producer = report->first_divergence->producer;
    size_t row = 0;
    while (row < report->tensors.size() && report->tensors[row].producer != producer) ++row;
    ASSERT_LT(row, report->tensors.size());
    EXPECT_EQ(report->tensors[row].index, static_cast<size_t>(fault)) << producer;
    if (row > 0) EXPECT_EQ(report->tensors[row - 1].status, Verdict::kPass) << "fault at " << fault;
    // At most 16 tensors a round, a few rounds: far fewer than 1000 observed.
    const size_t observed = report->CountStatus(Verdict::kPass) + report->CountStatus(Verdict::kFail);
    EXPECT_LE(observed, 16u * 4) << "fault at " << fault;
    ASSERT_FALSE(report->observer_notes.empty());
    EXPECT_NE(report->observer_notes.back().find("rounds of at most 16"), std::string::npos)
        << report->observer_notes.back();
  }
}

TEST(LocateRounds, AGraphThatFitsIsObservedWholeInOneRound) {
  const Model reference = Chain(40, 20, 0.0f);
  const Model target = Chain(40, 20, 1.0f);
  LocateOptions o;
  o.ablation = false;
  o.max_observed = 64;
  auto report = Locate(reference, &target, Positive(), o);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->CountStatus(Verdict::kUnchecked), 0u);
  for (const auto& n : report->observer_notes) EXPECT_EQ(n.find("rounds"), std::string::npos) << n;
  ASSERT_TRUE(report->first_divergence);
}

}  // namespace
}  // namespace parity
