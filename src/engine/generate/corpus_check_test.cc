// CompareCorpusStep against a whole-vocabulary KL computed here, the tail
// bound it states, and the row format the Ray workers answer in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "engine/generate/corpus_check.h"
#include "engine/generate/corpus_result.h"

namespace parity {
namespace {

// A record of one prompt and one step holding `torch`'s top k and log-sum-exp.
CorpusRecord OneStep(const std::vector<float>& torch, int64_t k) {
  const int64_t v = static_cast<int64_t>(torch.size());
  CorpusRecord r{.prompts = 1, .steps = 1, .top_k = k, .vocab = v};
  std::vector<int32_t> order(v);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return torch[a] > torch[b]; });
  r.tokens = Tensor::FromVector<int64_t>(DType::kInt64, {1, 1}, {order[0]});
  r.topk_ids = Tensor(DType::kInt32, {1, 1, k});
  r.topk_logits = Tensor(DType::kFloat32, {1, 1, k});
  for (int64_t i = 0; i < k; ++i) {
    r.topk_ids.mutable_view<int32_t>()[i] = order[i];
    r.topk_logits.mutable_view<float>()[i] = torch[order[i]];
  }
  double mx = *std::max_element(torch.begin(), torch.end()), sum = 0;
  for (float x : torch) sum += std::exp(x - mx);
  r.lse = Tensor::FromVector<double>(DType::kFloat64, {1, 1}, {mx + std::log(sum)});
  return r;
}

double ExactKl(const std::vector<float>& p, const std::vector<float>& q) {
  auto lse = [](const std::vector<float>& x) {
    double mx = *std::max_element(x.begin(), x.end()), s = 0;
    for (float v : x) s += std::exp(v - mx);
    return mx + std::log(s);
  };
  const double lp = lse(p), lq = lse(q);
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) kl += std::exp(p[i] - lp) * ((p[i] - lp) - (q[i] - lq));
  return kl;
}

TEST(CorpusCheck, TheTopKKlIsALowerBoundWithinItsTailBoundAndExactAtTheVocabulary) {
  std::mt19937 rng(7);
  std::normal_distribution<float> logit(0, 3), noise(0, 0.05f);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> p(200), q(200);
    for (size_t i = 0; i < p.size(); ++i) p[i] = logit(rng), q[i] = p[i] + noise(rng) * (trial % 5);
    const double exact = ExactKl(p, q);
    const CorpusStep full = CompareCorpusStep(OneStep(p, 200), 0, 0, q);
    EXPECT_NEAR(full.kl, std::max(0.0, exact), 1e-12 + 1e-9 * exact);
    EXPECT_EQ(full.kl_tail_bound, 0);
    for (int64_t k : {1, 8, 64}) {
      const CorpusStep s = CompareCorpusStep(OneStep(p, k), 0, 0, q);
      EXPECT_LE(s.kl, exact + 1e-12) << "k " << k;
      EXPECT_GE(s.kl + s.kl_tail_bound, exact - 1e-12) << "k " << k;
      EXPECT_EQ(s.rank, full.rank);
      EXPECT_EQ(s.agree, full.agree);
    }
  }
}

TEST(CorpusCheck, RankIsPyTorchsTokenAmongOrtsLogitsFirstOnTies) {
  const std::vector<float> p = {0, 5, 1, 2}, q = {0, 1, 5, 5};
  const CorpusStep s = CompareCorpusStep(OneStep(p, 2), 0, 0, q);  // PyTorch's token 1; ORT's top 2 (first of the tie)
  EXPECT_FALSE(s.agree);
  EXPECT_EQ(s.ort_token, 2);
  EXPECT_EQ(s.rank, 3);
  const CorpusStep same = CompareCorpusStep(OneStep(p, 2), 0, 0, p);
  EXPECT_TRUE(same.agree);
  EXPECT_EQ(same.rank, 1);
  EXPECT_EQ(same.kl, 0);
}

TEST(CorpusCheck, ANanInOrtsRowIsInfinitelyFar) {
  const std::vector<float> p = {0, 5, 1, 2};
  const CorpusStep s = CompareCorpusStep(OneStep(p, 2), 0, 0, std::vector<float>{0, NAN, 1, 2});
  EXPECT_TRUE(std::isinf(s.kl));
}

TEST(CorpusResult, RowsRoundTripExactlyAndTheSummaryCountsThem) {
  CorpusPrompt a{.index = 0, .prompt_length = 3};
  a.steps = {{.kl = 1.0 / 3, .kl_tail_bound = 1e-300, .tail_mass = 0.1}, {.kl = INFINITY, .agree = false, .rank = 2}};
  auto back = ParseCorpusRow(FormatCorpusRow(a));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->steps[0].kl, 1.0 / 3);
  EXPECT_EQ(back->steps[0].kl_tail_bound, 1e-300);
  EXPECT_TRUE(std::isinf(back->steps[1].kl));
  EXPECT_EQ(back->FirstDivergent(), 1);
  EXPECT_FALSE(ParseCorpusRow("{\"steps\": [[1]]}"));
  CorpusPrompt b{.index = 1, .prompt_length = 2};
  b.steps = {{.kl = 1e-20}, {.kl = 2e-20}};
  CorpusResult r{.steps = 2, .kl_tolerance = 1e-12};
  r.prompts = {a, b};
  SummarizeCorpus(r);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.prompts_agreeing, 1);
  EXPECT_EQ(r.prompts_failing, 1);
  EXPECT_EQ(r.worst.front(), 0u);
  EXPECT_EQ(r.agreement_by_step[1], 0.5);
  EXPECT_EQ(QuantilesOf({1, 2, 3, 4}).median, 2.5);  // NumPy's linear interpolation
}

}  // namespace
}  // namespace parity
