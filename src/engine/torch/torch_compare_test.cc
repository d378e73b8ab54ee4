// The verdict of a comparison with PyTorch when value alignment refused
// layers (torch_compare.h): no plain PASS, and the layers named.
#include "engine/torch/torch_compare.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

LayerVerdict Layer(std::string module, Verdict status, bool refused = false) {
  LayerVerdict v;
  v.alignment.module = std::move(module);
  v.alignment.type = "Conv2d";
  v.alignment.how = status == Verdict::kUnchecked ? AlignHow::kNone : AlignHow::kScope;
  v.alignment.tensor = status == Verdict::kUnchecked ? "" : "t";
  v.alignment.refused = v.alignment.expected = refused;
  v.alignment.reason = refused ? "value alignment refused it" : "";
  v.status = status;
  return v;
}

TEST(TorchComparison, RefusedLayersNoAgreeingLayerFollowsAreNoPass) {
  TorchComparison c;
  c.layers = {Layer("a", Verdict::kPass), Layer("b", Verdict::kUnchecked), Layer("c", Verdict::kPass)};
  EXPECT_TRUE(c.passed());
  EXPECT_EQ(c.UncheckedExpectedLine(), "");
  EXPECT_NE(c.VerdictLine().find("computes what PyTorch computes"), std::string::npos);

  // Refused but followed by an agreeing layer: a divergence there would
  // have shown in 'c' (issue 50: a shared SiLU module's call).
  c.layers[1] = Layer("b", Verdict::kUnchecked, /*refused=*/true);
  EXPECT_TRUE(c.passed());
  EXPECT_TRUE(c.Uncovered().empty());
  EXPECT_NE(c.VerdictLine().find("each followed by layers that agree"), std::string::npos) << c.VerdictLine();
  // Without structure (every layer placed by value) a refusal is uncovered.
  c.layers = {Layer("a", Verdict::kPass), Layer("b", Verdict::kUnchecked, true), Layer("c", Verdict::kPass)};
  for (auto& l : c.layers)
    if (l.alignment.how == AlignHow::kScope) l.alignment.how = AlignHow::kValue;
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.Uncovered(), std::vector<size_t>{1});
  // Refused with nothing agreeing after it: no pass.
  c.layers = {Layer("a", Verdict::kPass), Layer("c", Verdict::kPass), Layer("b", Verdict::kUnchecked, true)};
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.Refused(), std::vector<size_t>{2});
  EXPECT_EQ(c.Uncovered(), std::vector<size_t>{2});
  c.layers = {Layer("a", Verdict::kPass), Layer("b", Verdict::kUnchecked, true)};
  EXPECT_EQ(c.Refused(), std::vector<size_t>{1});
  EXPECT_EQ(c.UncheckedExpected(), std::vector<size_t>{1});
  const std::string line = c.VerdictLine();
  EXPECT_NE(line.find("could not be checked"), std::string::npos) << line;
  EXPECT_NE(line.find("'b'"), std::string::npos) << line;
  EXPECT_EQ(line.find("computes what PyTorch computes"), std::string::npos) << line;
  EXPECT_NE(c.UncheckedExpectedLine().find("1 refused by value"), std::string::npos) << c.UncheckedExpectedLine();
}

TEST(TorchComparison, RefusedLayersBeforeTheFirstDivergenceAreNamedWithIt) {
  TorchComparison c;
  c.layers = {Layer("a", Verdict::kUnchecked, true), Layer("b", Verdict::kFail), Layer("c", Verdict::kUnchecked, true)};
  c.first_divergence = 1;
  const std::string line = c.VerdictLine();
  EXPECT_NE(line.find("first divergent layer: module 'b'"), std::string::npos) << line;
  EXPECT_NE(line.find("refused 1 layer(s)"), std::string::npos) << line;
  EXPECT_NE(line.find("'a'"), std::string::npos) << line;
  EXPECT_EQ(line.find("'c'"), std::string::npos) << line;  // after it: not where it may start
}

TEST(TorchComparison, AWrapperPrefixIsStatedWithTheAlignment) {
  TorchComparison c;
  c.layers = {Layer("model.a", Verdict::kPass)};
  EXPECT_EQ(c.AlignmentLine().find("prefix"), std::string::npos);
  c.paths = ModulePathMap{.strip = "model.", .add = "", .dumped = 2, .in_export = 1, .as_is = 0};
  EXPECT_NE(c.AlignmentLine().find("lose the prefix 'model.': 1 of 2 dumped modules"), std::string::npos)
      << c.AlignmentLine();
}

}  // namespace
}  // namespace parity
