// RunConfig's provider options (issue 24): "providers" objects in the config
// JSON, their round trip, and what a stored config may carry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/run_config.h"

namespace parity {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(RunConfigProviders, ObjectsCarryOptionsAndRoundTrip) {
  const json j = json::parse(
      R"({"providers": [{"name": "openvino", "options": {"load_config": "{\"CPU\":{}}", "num_of_threads": 2}}, "cpu"]})");
  auto c = RunConfigFromJson(j);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->providers, (std::vector<std::string>{"openvino", "cpu"}));
  EXPECT_EQ(c->provider_options.at("openvino").at("load_config"), R"({"CPU":{}})");
  EXPECT_EQ(c->provider_options.at("openvino").at("num_of_threads"), "2");
  const json back = RunConfigToJson(*c);
  EXPECT_EQ(back["providers"][0]["name"], "openvino");
  EXPECT_EQ(back["providers"][1], "cpu");
  auto again = RunConfigFromJson(back);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->provider_options, c->provider_options);
  EXPECT_THAT(c->Label(), HasSubstr("openvino[load_config="));
}

TEST(RunConfigProviders, BadObjectsNameTheKey) {
  auto no_name = RunConfigFromJson(json::parse(R"({"providers": [{"options": {}}]})"));
  ASSERT_FALSE(no_name.has_value());
  EXPECT_THAT(no_name.error().message(), HasSubstr("providers[0]"));
  auto extra = RunConfigFromJson(json::parse(R"({"providers": [{"name": "openvino", "device": "CPU"}]})"));
  ASSERT_FALSE(extra.has_value());
  EXPECT_THAT(extra.error().message(), HasSubstr("providers[0].device"));
  auto bad_value = RunConfigFromJson(json::parse(R"({"providers": [{"name": "x", "options": {"a": [1]}}]})"));
  ASSERT_FALSE(bad_value.has_value());
  EXPECT_THAT(bad_value.error().message(), HasSubstr("options.a"));
}

TEST(RunConfigProviders, StoredConfigRefusesOptionsThatCouldNameAFile) {
  const json inline_json = json::parse(
      R"({"providers": [{"name": "openvino", "options": {"load_config": "{\"CPU\":{}}"}}]})");
  EXPECT_TRUE(RunConfigFromJson(inline_json, ConfigOrigin::kStored).has_value());
  const json file = json::parse(R"({"providers": [{"name": "openvino", "options": {"load_config": "/tmp/x.json"}}]})");
  auto r = RunConfigFromJson(file, ConfigOrigin::kStored);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(), HasSubstr("not allowed in a stored config"));
  const json cache = json::parse(R"({"providers": [{"name": "openvino", "options": {"cache_dir": "/tmp"}}]})");
  EXPECT_FALSE(RunConfigFromJson(cache, ConfigOrigin::kStored).has_value());
  EXPECT_TRUE(RunConfigFromJson(cache, ConfigOrigin::kUser).has_value());
}

}  // namespace
}  // namespace parity
