#include "core/run_config.h"

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/testing/temp_dir.h"

namespace parity {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(OptLevel, NamesRoundTrip) {
  for (OptLevel level : {OptLevel::kDisable, OptLevel::kBasic, OptLevel::kExtended, OptLevel::kAll}) {
    auto parsed = OptLevelFromName(OptLevelName(level));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, level);
  }
}

TEST(OptLevel, AcceptsOrtNamesInAnyCase) {
  EXPECT_EQ(OptLevelFromName("ORT_ENABLE_ALL").value(), OptLevel::kAll);
  EXPECT_EQ(OptLevelFromName("Extended").value(), OptLevel::kExtended);
}

TEST(OptLevel, RejectsUnknownNameListingChoices) {
  auto r = OptLevelFromName("max");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(r.error().message(), HasSubstr("'max'"));
  EXPECT_THAT(r.error().message(), HasSubstr("disable, basic, extended or all"));
}

TEST(RunConfigLabel, DefaultIsLevelName) {
  EXPECT_EQ(RunConfig{}.Label(), "disable");
  RunConfig all;
  all.opt_level = OptLevel::kAll;
  EXPECT_EQ(all.Label(), "all");
}

TEST(RunConfigLabel, ListsWhatDiffersFromDefault) {
  RunConfig c;
  c.opt_level = OptLevel::kAll;
  c.providers = {"cuda", "cpu"};
  c.intra_op_threads = 1;
  c.disabled_optimizers = {"BiasGeluFusion"};
  EXPECT_EQ(c.Label(), "all -BiasGeluFusion threads=1 cuda,cpu");
}

TEST(RunConfigJson, ParsesEveryKey) {
  json j = json::parse(R"({"opt": "extended", "providers": ["cuda", "cpu"], "intra_op_threads": 2,
      "inter_op_threads": 3, "execution_mode": "parallel", "disable_optimizers": ["GeluFusionL2"],
      "session_config": {"session.use_env_allocators": "1", "session.intra_op.allow_spinning": 0,
                         "session.disable_prepacking": true},
      "optimized_model_path": "/tmp/o.onnx"})");
  auto r = RunConfigFromJson(j);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->opt_level, OptLevel::kExtended);
  EXPECT_EQ(r->providers, (std::vector<std::string>{"cuda", "cpu"}));
  EXPECT_EQ(r->intra_op_threads, 2);
  EXPECT_EQ(r->inter_op_threads, 3);
  EXPECT_TRUE(r->parallel_execution);
  EXPECT_EQ(r->disabled_optimizers, (std::vector<std::string>{"GeluFusionL2"}));
  EXPECT_EQ(r->session_entries.at("session.use_env_allocators"), "1");
  EXPECT_EQ(r->session_entries.at("session.intra_op.allow_spinning"), "0");
  EXPECT_EQ(r->session_entries.at("session.disable_prepacking"), "1");
  EXPECT_EQ(r->optimized_model_path, "/tmp/o.onnx");
}

TEST(RunConfigJson, EmptyObjectGivesDefaults) {
  auto r = RunConfigFromJson(json::object());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->opt_level, OptLevel::kDisable);
  EXPECT_EQ(r->providers, std::vector<std::string>{"cpu"});
}

TEST(RunConfigJson, RoundTrips) {
  RunConfig c{.opt_level = OptLevel::kBasic,
              .providers = {"cpu"},
              .intra_op_threads = 4,
              .inter_op_threads = 1,
              .parallel_execution = true,
              .disabled_optimizers = {"A", "B"},
              .session_entries = {{"k", "v"}},
              .optimized_model_path = "x.onnx"};
  auto back = RunConfigFromJson(RunConfigToJson(c));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(RunConfigToJson(*back), RunConfigToJson(c));
  EXPECT_EQ(back->Label(), c.Label());
}

struct BadCase {
  const char* json_text;
  const char* expected_in_message;
};

class RunConfigJsonRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(RunConfigJsonRejects, NamingKeyAndExpectedType) {
  auto r = RunConfigFromJson(json::parse(GetParam().json_text));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(r.error().message(), HasSubstr(GetParam().expected_in_message));
}

INSTANTIATE_TEST_SUITE_P(
    BadConfigs, RunConfigJsonRejects,
    ::testing::Values(
        BadCase{R"({"opt": 3})", "'opt': expected a string, got an integer"},
        BadCase{R"({"opt": "fast"})", "unknown optimization level 'fast'"},
        BadCase{R"({"providers": "cpu"})", "'providers': expected an array of names or {\"name\", \"options\"} objects"},
        BadCase{R"({"providers": ["cpu", 1]})", "'providers[1]': expected a name or an object, got an integer"},
        BadCase{R"({"providers": []})", "at least one execution provider"},
        BadCase{R"({"intra_op_threads": "2"})", "'intra_op_threads': expected a non-negative integer"},
        BadCase{R"({"inter_op_threads": -1})", "'inter_op_threads'"},
        BadCase{R"({"intra_op_threads": 1.5})", "'intra_op_threads': expected a non-negative integer"},
        BadCase{R"({"execution_mode": "async"})", "'execution_mode': expected \"sequential\""},
        BadCase{R"({"disable_optimizers": "X"})", "'disable_optimizers': expected an array"},
        BadCase{R"({"session_config": {"a": [1]}})", "'session_config.a': expected a string"},
        BadCase{R"({"session_config": []})", "'session_config': expected an object"},
        BadCase{R"({"optimised": 1})", "unknown config key 'optimised'"},
        BadCase{R"([1, 2])", "expected a JSON object"}));

class LoadRunConfigTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    const std::string path = (dir_ / "config.json").string();
    std::ofstream(path) << text;
    return path;
  }
  const testing::TempDir dir_{"parity_run_config_test"};
};

TEST_F(LoadRunConfigTest, ReadsFile) {
  auto r = LoadRunConfig(Write(R"({"opt": "all", "intra_op_threads": 1})"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->Label(), "all threads=1");
}

TEST_F(LoadRunConfigTest, MissingFileIsNotFoundNamingPath) {
  auto r = LoadRunConfig("/nonexistent/dir/cfg.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(r.error().message(), HasSubstr("/nonexistent/dir/cfg.json"));
}

TEST_F(LoadRunConfigTest, MalformedJsonNamesFileAndPosition) {
  const std::string path = Write("{\"opt\": \"all\",\n  oops}");
  auto r = LoadRunConfig(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(r.error().message(), HasSubstr(path));
  EXPECT_THAT(r.error().message(), HasSubstr("line 2"));
}

TEST_F(LoadRunConfigTest, BadKeyNamesFileAndKey) {
  const std::string path = Write(R"({"opt": "all", "threads": 1})");
  auto r = LoadRunConfig(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(), HasSubstr(path + ": unknown config key 'threads'"));
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

TEST(StoredRunConfig, RefusesThreadCountsAboveTheCapNamingKeyAndCap) {
  const int cap = MaxStoredThreads();
  EXPECT_GE(cap, 64);
  for (const char* key : {"intra_op_threads", "inter_op_threads"}) {
    auto r = RunConfigFromJson(nlohmann::json{{key, 4096}}, ConfigOrigin::kStored);
    ASSERT_FALSE(r.has_value()) << key;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(fmt::format("config key '{}': 4096 threads in a stored config", key)),
              std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().message().find(fmt::format("above the cap of {}", cap)), std::string::npos);
    // The user's own config may ask for it; a stored one at the cap is read.
    EXPECT_TRUE(RunConfigFromJson(nlohmann::json{{key, 4096}}, ConfigOrigin::kUser).has_value());
    EXPECT_TRUE(RunConfigFromJson(nlohmann::json{{key, cap}}, ConfigOrigin::kStored).has_value());
  }
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// Issue 46, class 9: a stored config's OpenVINO load_config passed any
// property; CACHE_DIR=/any/dir made OpenVINO write compiled blobs there.
TEST(StoredRunConfig, OpenVinoLoadConfigPassesOnlyAllowedProperties) {
  auto with = [](const std::string& load_config) {
    return nlohmann::json{{"providers", nlohmann::json::array({nlohmann::json{
                                            {"name", "openvino"}, {"options", {{"load_config", load_config}}}}})}};
  };
  const std::string f32 = R"({"CPU":{"INFERENCE_PRECISION_HINT":"f32","NUM_STREAMS":1}})";
  EXPECT_TRUE(RunConfigFromJson(with(f32), ConfigOrigin::kStored).has_value());
  for (const std::string bad : {R"({"CPU":{"CACHE_DIR":"/any/dir"}})",
                                R"({"CPU":{"INFERENCE_PRECISION_HINT":"f32","CACHE_DIR":"/tmp/x"}})",
                                R"({"GPU":{"DEVICE_PROPERTIES":{"CPU":{"CACHE_DIR":"/x"}}}})",
                                R"({"CPU":{"INFERENCE_PRECISION_HINT":{"nested":1}}})", R"({"../x":{}})",
                                R"({"CPU":"CACHE_DIR"})", R"({"CPU":{}} trailing)"}) {
    auto r = RunConfigFromJson(with(bad), ConfigOrigin::kStored);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(r.error().message().find("load_config"), std::string::npos) << r.error().message();
    // The user's own config names what it wants.
    EXPECT_TRUE(RunConfigFromJson(with(bad), ConfigOrigin::kUser).has_value()) << bad;
  }
}

}  // namespace
}  // namespace parity
