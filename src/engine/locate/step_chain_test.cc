#include "engine/locate/step_chain.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

// A trace of a 4-kernel QLinearConv chain whose NHWC tensors cannot be
// observed: each kernel alone differs by 0, 1 (a rounding tie), 3 (a
// failure) and 0 grid units.
QuantStepTensor Chain(double steps_at_output) {
  return {.tensor = "out_QuantizeLinear_Output", .fused_node = "/0/Conv_token_1", .steps = steps_at_output,
          .chain = {{"/0/Conv", "a_q", 0}, {"/2/Conv", "b_q", 1}, {"/4/Conv", "c_q", 3}, {"/6/Conv", "out_q", 0}}};
}

TEST(NarrowToKernel, AFailureIsNamedAtTheFirstKernelPastOneStepAndRoundingAtTheFirstStep) {
  QuantStepTensor failure = Chain(4);
  NarrowToKernel(failure, 1);
  EXPECT_EQ(failure.kernel, "/4/Conv");  // two steps or more: the failure path
  QuantStepTensor rounding = Chain(1);
  NarrowToKernel(rounding, 0);
  EXPECT_EQ(rounding.kernel, "/2/Conv");  // the first step: a rounding tie
}

TEST(NarrowToKernel, StepsThatOnlyAddUpAlongTheChainNameNoKernel) {
  QuantStepTensor t{.tensor = "out", .steps = 2, .chain = {{"/0/Conv", "a", 1}, {"/2/Conv", "b", 1}}};
  NarrowToKernel(t, 1);
  EXPECT_EQ(t.kernel, "");
}

}  // namespace
}  // namespace parity
