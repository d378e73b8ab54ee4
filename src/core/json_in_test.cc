// JSON parsed with a bound on what the parse costs (issue 29, probe 8).
#include "core/json_in.h"

#include <gtest/gtest.h>

#include <string>

namespace parity {
namespace {

TEST(JsonIn, ParsesOrdinaryJsonAndNamesThePositionOfAnError) {
  auto j = ParseJsonBounded(R"({"a": [1, 2, {"b": "x"}]})", "c.json");
  ASSERT_TRUE(j) << j.error().message();
  EXPECT_EQ((*j)["a"][2]["b"], "x");
  auto bad = ParseJsonBounded("{\"a\": }", "c.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message().find("c.json: not valid JSON: "), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("line 1"), std::string::npos) << bad.error().message();
}

// nlohmann throws out_of_range, not parse_error, for a number past double's
// range; it must come back as an error, not escape as an exception (the
// baseline_manifest fuzz target aborted on "path": 41015e2171).
TEST(JsonIn, ANumberPastDoublesRangeIsAnErrorNotAnException) {
  for (const char* text : {R"({"path": 41015e2171})", "[1e999]", "-1e400"}) {
    auto r = ParseJsonBounded(text, "m.json");
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find("m.json: not valid JSON: "), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("number overflow"), std::string::npos) << r.error().message();
    EXPECT_FALSE(ParseOrderedJsonBounded(text, "m.json")) << text;
  }
}

TEST(JsonIn, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(EstimateJsonCost(deep).max_depth, 100000);
  auto r = ParseJsonBounded(deep, "m.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("m.json: JSON nested 100000 levels deep (parity reads at most 128)"),
            std::string::npos)
      << r.error().message();
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJsonBounded(ok, "m.json"));
}

TEST(JsonIn, ManySmallValuesAreRefusedWhenTheyWouldCostMoreThanTheBudget) {
  std::string many = "[";
  for (int i = 0; i < 2'000'000; ++i) many += "{},";
  many += "{}]";  // 6 MiB of text, about 40x that in nlohmann::json
  auto r = ParseJsonBounded(many, "m.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("too many small values"), std::string::npos) << r.error().message();
  // Strings and pretty-printed manifests stay well inside the budget.
  std::string strings = "[";
  for (int i = 0; i < 200'000; ++i) strings += "\"layer_0001_some_module_name.npy\",\n  ";
  strings += "\"x\"]";
  EXPECT_LT(EstimateJsonCost(strings).estimated_bytes, kJsonBudgetFactor * static_cast<int64_t>(strings.size()));
  EXPECT_TRUE(ParseJsonBounded(strings, "m.json"));
}

TEST(JsonIn, OrderedParseKeepsTheOrderOfKeys) {
  auto j = ParseOrderedJsonBounded(R"({"z": 1, "a": 2})", "d.json");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->begin().key(), "z");
  EXPECT_FALSE(ParseOrderedJsonBounded(std::string(200, '{'), "d.json"));
}

}  // namespace
}  // namespace parity
