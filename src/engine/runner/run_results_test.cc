#include "engine/runner/run_results.h"

#include <gtest/gtest.h>

#include "ort/run_limits.h"
#include "ort/session.h"

namespace parity {
namespace {

TensorSet Outputs(float v) {
  TensorSet t;
  t.Set("b", Tensor::FromVector<float>(DType::kFloat32, {2}, {v, v + 1}));
  t.Set("a", Tensor::FromVector<float>(DType::kFloat32, {1}, {-v}));
  return t;
}

void ExpectSame(const TensorSet& got, const TensorSet& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name);  // the same order
    EXPECT_TRUE(got[i].tensor.BitwiseEquals(want[i].tensor)) << want[i].name;
  }
}

TEST(RunResults, KeepsEachSamplesOutputsOrTheErrorOfItsRun) {
  RunResults r("reference");
  r.Add("typical", Outputs(1));
  r.Add("tiny", InvalidArgument("refused: wrong rank"));
  r.Add("slow", Fail(ErrorCode::kRuntime, std::string("run ") + std::string(ort::kRunTimedOut) + " 1 s"));
  r.Add("big", Fail(ErrorCode::kRuntime, std::string("run ") + std::string(ort::kRunOverMemory) + " 1 MiB"));
  EXPECT_EQ(r.StatusOf("typical"), RunResults::Status::kRan);
  EXPECT_EQ(r.StatusOf("tiny"), RunResults::Status::kRefused);
  EXPECT_EQ(r.StatusOf("slow"), RunResults::Status::kTimedOut);
  EXPECT_EQ(r.StatusOf("big"), RunResults::Status::kOverMemory);
  EXPECT_EQ(r.StatusOf("other"), RunResults::Status::kNotRun);
  EXPECT_EQ(RunStatusName(r.StatusOf("slow")), "timeout");
  EXPECT_TRUE(r.Failed("tiny"));
  EXPECT_FALSE(r.Failed("typical"));
  EXPECT_FALSE(r.Failed("other"));
  ASSERT_NE(r.InMemory("typical"), nullptr);
  ExpectSame(*r.InMemory("typical"), Outputs(1));
  EXPECT_EQ(r.InMemory("tiny"), nullptr);
  auto refused = r.Get("tiny");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message(), "refused: wrong rank");
  auto missing = r.Get("other");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kInternal);
  EXPECT_NE(missing.error().message().find("was not run on the reference"), std::string::npos);
  EXPECT_EQ(r.size(), 4u);
  EXPECT_EQ(r.spilled(), 0u);
}

TEST(RunResults, PastItsBudgetASamplesOutputsGoToDiskAndComeBackInTheRunsOrder) {
  // Each sample's outputs are 12 bytes: the budget holds the first only.
  RunResults r("reference", 20);
  r.SetOutputNames({"b", "a"});
  r.Add("s0", Outputs(0));
  r.Add("s1", Outputs(1));
  r.Add("s2", InvalidArgument("refused"));  // an error costs no memory and never goes to disk
  r.Add("s3", Outputs(3));
  EXPECT_EQ(r.spilled(), 2u);
  EXPECT_NE(r.InMemory("s0"), nullptr);
  EXPECT_EQ(r.InMemory("s1"), nullptr);  // on disk
  EXPECT_EQ(r.StatusOf("s1"), RunResults::Status::kRan);
  EXPECT_FALSE(r.Failed("s1"));
  EXPECT_EQ(r.StatusOf("s2"), RunResults::Status::kRefused);
  for (float v : {0.f, 1.f, 3.f}) {
    auto got = r.Get(v == 0 ? "s0" : v == 1 ? "s1" : "s3");
    ASSERT_TRUE(got.has_value()) << got.error().message();
    TensorSet want;  // the run's order: b, then a
    want.Set("b", *Outputs(v).Find("b"));
    want.Set("a", *Outputs(v).Find("a"));
    ExpectSame(*got, v == 0 ? Outputs(0) : want);
  }
}

TEST(RunResults, ANewRunOfASampleReplacesTheOldOne) {
  RunResults r("target", 0);  // every output on disk
  r.SetOutputNames({"b", "a"});
  r.Add("s", Outputs(1));
  EXPECT_EQ(r.spilled(), 1u);
  r.Add("s", InvalidArgument("refused"));
  EXPECT_EQ(r.spilled(), 0u);
  EXPECT_TRUE(r.Failed("s"));
  EXPECT_EQ(r.size(), 1u);
}

TEST(RunResults, KeepsHowLongEachRunTookOnDiskOrInMemory) {
  RunResults r("reference", 0);  // every output on disk
  r.SetOutputNames({"b", "a"});
  r.Add("timed", Outputs(1), 12.5);
  r.Add("untimed", Outputs(2));
  EXPECT_EQ(r.spilled(), 2u);
  EXPECT_DOUBLE_EQ(r.RunMs("timed"), 12.5);
  EXPECT_DOUBLE_EQ(r.RunMs("untimed"), 0);
  EXPECT_DOUBLE_EQ(r.RunMs("never run"), 0);
  r.Add("timed", InvalidArgument("refused"), 3);  // a new run's time replaces the old one's
  EXPECT_DOUBLE_EQ(r.RunMs("timed"), 3);
}

}  // namespace
}  // namespace parity
