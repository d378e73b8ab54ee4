#include "engine/inputs/perturb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace parity {
namespace {

TEST(PerturbByUlp, MovesEveryFloatByOneUlpAndLeavesTheRest) {
  const std::vector<float> x = {1.0f, -3.5f, 0.0f, 1e-30f, 7.25f, -0.125f};
  const std::vector<int64_t> ids = {1, 2, 3};
  Sample s{"typical", {}};
  s.tensors.Set("x", Tensor::FromVector(DType::kFloat32, {6}, x));
  s.tensors.Set("ids", Tensor::FromVector(DType::kInt64, {3}, ids));
  const Sample p = PerturbByUlp(s, 1);
  auto moved = p.tensors.Find("x")->view<float>();
  int up = 0, down = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 0) {
      EXPECT_NE(moved[i], 0.0f);  // by eps x the rms of the others
      EXPECT_LT(std::fabs(moved[i]), 1e-5f);
      continue;
    }
    const bool is_up = moved[i] == std::nextafter(x[i], INFINITY);
    const bool is_down = moved[i] == std::nextafter(x[i], -INFINITY);
    EXPECT_TRUE(is_up || is_down) << i;
    up += is_up;
    down += is_down;
  }
  EXPECT_GT(up + down, 0);
  EXPECT_TRUE(p.tensors.Find("ids")->BitwiseEquals(*s.tensors.Find("ids")));
  // Seeded: the same draw twice, another seed another draw.
  EXPECT_TRUE(PerturbByUlp(s, 1).tensors.Find("x")->BitwiseEquals(*p.tensors.Find("x")));
  EXPECT_TRUE(s.tensors.Find("x")->view<float>()[0] == 1.0f);  // the original is untouched
}

}  // namespace
}  // namespace parity
