#include "engine/fix/fix_search.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace parity {
namespace {

// Passes when `change` holds every name of `needed`.
Probe NeedsAll(std::set<std::string> needed, int* calls) {
  return [needed, calls](const std::vector<std::string>& change, std::string*) -> Result<bool> {
    ++*calls;
    return std::all_of(needed.begin(), needed.end(), [&](const std::string& n) {
      return std::find(change.begin(), change.end(), n) != change.end();
    });
  };
}

// A chain a0 - a1 - ... - a19: growing adds each end's neighbours.
Grow ChainGrow() {
  return [](const std::vector<std::string>& current) {
    std::vector<std::string> more;
    for (const auto& c : current) {
      const int i = std::stoi(c.substr(1));
      for (int j : {i - 1, i + 1})
        if (j >= 0 && j < 20) more.push_back("a" + std::to_string(j));
    }
    return more;
  };
}

std::vector<std::string> Chain() {
  std::vector<std::string> all;
  for (int i = 0; i < 20; ++i) all.push_back("a" + std::to_string(i));
  return all;
}

TEST(FixSearch, GrowsFromTheSeedToTheNeighbourItNeedsAndDropsTheRest) {
  int calls = 0;
  auto r = SearchSmallestChange({.seeds = {"a7"}, .grow = ChainGrow(), .all = Chain()}, NeedsAll({"a7", "a8"}, &calls));
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->found.has_value());
  auto found = *r->found;
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (std::vector<std::string>{"a7", "a8"}));
  EXPECT_TRUE(r->minimal);
  EXPECT_EQ(static_cast<int>(r->probes.size()), calls);  // cached sets are not probed twice
  EXPECT_EQ(r->probes[0].phase, "seed");
  EXPECT_FALSE(r->probes[0].passed);
  EXPECT_EQ(r->probes[1].phase, "grow");
  EXPECT_TRUE(r->probes[1].passed);
}

TEST(FixSearch, BisectsAWrongSeedSetDownToTheOneNameThatMatters) {
  int calls = 0;
  auto r = SearchSmallestChange({.seeds = {}, .all = Chain()}, NeedsAll({"a13"}, &calls));
  ASSERT_TRUE(r.has_value() && r->found.has_value());
  EXPECT_EQ(*r->found, std::vector<std::string>{"a13"});
  EXPECT_LE(calls, 12);  // about 2 log2(20)
}

TEST(FixSearch, ReportsNothingWhenEvenTheWholeSetFails) {
  int calls = 0;
  auto r = SearchSmallestChange({.seeds = {"a1"}, .grow = ChainGrow(), .all = Chain()}, NeedsAll({"zz"}, &calls));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->found.has_value());
  EXPECT_EQ(r->probes.back().change.size(), 20u);  // it went as far as the whole set
  EXPECT_FALSE(r->budget_spent);
}

TEST(FixSearch, StopsAtTheBudget) {
  int calls = 0;
  auto r = SearchSmallestChange({.seeds = {"a0"}, .grow = ChainGrow(), .all = Chain(), .budget = 3},
                                NeedsAll({"a19"}, &calls));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->found.has_value());
  EXPECT_TRUE(r->budget_spent);
  EXPECT_EQ(calls, 3);
}

TEST(FixSearch, AProbeErrorEndsTheSearch) {
  Probe failing = [](const std::vector<std::string>&, std::string*) -> Result<bool> {
    return RuntimeError("ORT failed");
  };
  auto r = SearchSmallestChange({.seeds = {"a0"}, .all = Chain()}, failing);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "ORT failed");
}

}  // namespace
}  // namespace parity
