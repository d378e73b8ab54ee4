#include "engine/locate/locate_steps.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

LocateTensor Observed(const std::string& name, const std::string& kernel, double max_abs) {
  TensorMetrics m;
  m.max_abs = max_abs;
  return {.name = name, .fused_node = kernel, .status = Verdict::kPass, .metrics = m};
}

ToleranceRule OneStep(const std::string& name, double step) { return {.pattern = name, .atol = step, .rtol = 0.0}; }

// A trace of a QLinearConv chain: uint8 outputs (1 grid unit per step) and one float DequantizeLinear output.
TEST(SummarizeSteps, OneStepIsRoundingAndMoreIsAFailureNamedAtItsKernel) {
  LocateReport r;
  r.tensors = {Observed("a_QuantizeLinear_Output", "QLinearConv_a", 0),
               Observed("b_QuantizeLinear_Output", "QLinearConv_b", 1),  // a rounding tie
               Observed("c_DequantizeLinear_Output", "QLinearConv_c", 0.05),  // 1 step of scale 0.05
               Observed("d_QuantizeLinear_Output", "QLinearConv_d", 2),  // two steps: a failure
               Observed("e_QuantizeLinear_Output", "QLinearConv_e", 5),
               Observed("not_quantized", "Gemm", 3)};
  const QuantDeployed d =
      SummarizeSteps(r, {OneStep("a_QuantizeLinear_Output", 1), OneStep("b_QuantizeLinear_Output", 1),
                         OneStep("c_DequantizeLinear_Output", 0.05), OneStep("d_QuantizeLinear_Output", 1),
                         OneStep("e_QuantizeLinear_Output", 1)});
  EXPECT_EQ(d.judged, 5u);
  EXPECT_EQ(d.exact, 1u);
  EXPECT_EQ(d.rounding, 2u);
  EXPECT_EQ(d.failed, 2u);
  ASSERT_TRUE(d.first_rounding.has_value());
  EXPECT_EQ(d.first_rounding->fused_node, "QLinearConv_b");
  EXPECT_DOUBLE_EQ(d.first_rounding->steps, 1);
  ASSERT_TRUE(d.first_failure.has_value());
  EXPECT_EQ(d.first_failure->fused_node, "QLinearConv_d");  // where the extra steps first appear
  EXPECT_DOUBLE_EQ(d.first_failure->steps, 2);
}

TEST(SummarizeSteps, NanIsAFailureAndUnobservedTensorsAreNotJudged) {
  LocateReport r;
  LocateTensor nan = Observed("x_DequantizeLinear_Output", "QLinearConv_x", 0);
  nan.metrics->nan_mismatch = 1;
  r.tensors = {nan, {.name = "y_QuantizeLinear_Output", .status = Verdict::kUnchecked}};
  const QuantDeployed d =
      SummarizeSteps(r, {OneStep("x_DequantizeLinear_Output", 0.1), OneStep("y_QuantizeLinear_Output", 1)});
  EXPECT_EQ(d.judged, 1u);
  EXPECT_EQ(d.failed, 1u);
  EXPECT_FALSE(d.first_rounding.has_value());
}

}  // namespace
}  // namespace parity
