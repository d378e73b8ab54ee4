// bench's config set and exit status (engine/bench/bench.h): the decisions
// the CLI hands over (issue 55).
#include <gtest/gtest.h>

#include "engine/bench/bench.h"

namespace parity {
namespace {

RunConfig OnProviders(std::vector<std::string> providers) {
  RunConfig c;
  c.providers = std::move(providers);
  return c;
}

TEST(BenchConfigSet, EachLevelAgainOnTheProvidersAfterTheCpuOnes) {
  RunConfig overlay = OnProviders({"openvino", "cpu"});
  overlay.provider_options["openvino"]["device_type"] = "CPU";
  auto set = BenchConfigSet("disable,all", overlay);
  ASSERT_TRUE(set.has_value()) << set.error().message();
  ASSERT_EQ(set->size(), 4u);
  EXPECT_EQ((*set)[0].label, "disable");
  EXPECT_EQ((*set)[1].label, "all");
  EXPECT_EQ((*set)[2].config.opt_level, OptLevel::kDisable);
  EXPECT_EQ((*set)[3].config.opt_level, OptLevel::kAll);
  EXPECT_EQ((*set)[3].config.providers, (std::vector<std::string>{"openvino", "cpu"}));
  EXPECT_EQ((*set)[3].config.provider_options.at("openvino").at("device_type"), "CPU");
  EXPECT_EQ((*set)[3].label, (*set)[3].config.Label());
  EXPECT_EQ((*set)[0].config.providers, RunConfig{}.providers);  // the CPU reference stays as it is
}

TEST(BenchConfigSet, NoProvidersNoLevelsOrNoneGivenAddNothing) {
  auto plain = BenchConfigSet("disable,all", OnProviders({}));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->size(), 2u);
  auto none = BenchConfigSet("", OnProviders({"cuda"}));
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

TEST(BenchConfigSet, TheProvidersErrorOnlyWhenALevelTakesThem) {
  const Result<RunConfig> bad = InvalidArgument("--provider-option 'x': expected EP:KEY=VALUE");
  auto taken = BenchConfigSet("all", bad);
  ASSERT_FALSE(taken.has_value());
  EXPECT_EQ(taken.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(BenchConfigSet("", bad).has_value());
  auto unknown = BenchConfigSet("disable,fastest", OnProviders({}));
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message().find("fastest"), std::string::npos);
}

TEST(BenchStatus, BadInputFirstThenARuntimeFailureNamingTheConfigElseOk) {
  BenchReport report;
  report.configs.push_back({.label = "disable"});
  report.configs.push_back({.label = "all"});
  EXPECT_TRUE(BenchStatus(report).has_value());
  report.configs[0].error = "ORT crashed";
  auto runtime = BenchStatus(report);
  ASSERT_FALSE(runtime.has_value());
  EXPECT_EQ(runtime.error().code(), ErrorCode::kRuntime);
  EXPECT_EQ(runtime.error().message(), "config 'disable' failed (see the table above)");
  report.configs[1].error = "m.onnx [all]: opset 99 is newer than ORT's";
  report.configs[1].bad_input = true;
  auto bad = BenchStatus(report);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "m.onnx [all]: opset 99 is newer than ORT's");
}

}  // namespace
}  // namespace parity
