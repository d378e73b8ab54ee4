// Alignment of PyTorch dumps with their TorchScript exports, on models exported
// by python/parity/torch in SetUpTestSuite (one Python run for the suite; the
// .venv python, PARITY_PYTHON, must have torch). The ground truth comes from
// src/engine/torch/testdata/alignment_cases.py, derived from the exported graphs by
// its own rule (see that file).
#include "engine/torch/alignment.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/testing/temp_dir.h"
#include "engine/torch/torch_compare.h"
#include "engine/torch/torch_dump.h"
#include "onnx/model.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Per-case score of the alignment against the truth.
struct Score {
  int right = 0, wrong = 0, unaligned = 0, total = 0;
  std::vector<std::string> problems;
  double rate() const { return total == 0 ? 1.0 : static_cast<double>(right) / total; }
};

Score ScoreCase(const TorchComparison& c, const json& truth, bool leaves) {
  Score s;
  for (size_t i = 0; i < truth.size(); ++i) {
    const json& t = truth[i];
    const LayerVerdict& v = c.layers.at(i);
    const LayerAlignment& a = v.alignment;
    if (t["leaf"].get<bool>() != leaves) continue;
    const std::string kind = t["kind"];
    const std::string what = fmt::format("{} (call {}): {} '{}' [{}] {}", a.module, a.call,
                                         AlignHowName(a.how), a.tensor, kind, a.reason);
    if (kind == "folded") {  // no counterpart: must not be aligned
      if (!a.tensor.empty()) s.wrong++, s.problems.push_back("wrong: " + what);
      continue;
    }
    s.total++;
    if (a.tensor.empty()) {
      s.unaligned++;
      s.problems.push_back("unaligned: " + what);
    } else if (kind == "noop" ? v.status == Verdict::kPass : a.tensor == t["expected"].get<std::string>()) {
      s.right++;
    } else {
      s.wrong++;
      s.problems.push_back(fmt::format("wrong: {} (expected '{}')", what, t["expected"].dump()));
    }
  }
  return s;
}

class AlignmentOnExports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(testing::MakeTempDir("parity_alignment"));
    const std::string src = PARITY_SOURCE_DIR;
    const std::string cmd = fmt::format(
        "PYTHONPATH='{0}/python:{0}/python/tests' " PARITY_PYTHON " '{0}/src/engine/torch/testdata/alignment_cases.py' '{1}' "
        ">'{1}/gen.log' 2>&1",
        src, dir_->string());
    const int rc = std::system(cmd.c_str());
    status_ = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    if (status_ != 0) return;
    std::ifstream in(*dir_ / "cases.json");
    cases_ = new json(json::parse(in));
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (status_ == 0) fs::remove_all(*dir_, ec);  // kept for a look when generation failed
    delete dir_;
    delete cases_;
    cases_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(status_, 77) << PARITY_PYTHON " lacks torch, torchvision or onnx (make creates .venv/)";
    ASSERT_EQ(status_, 0) << "generating the exports failed; see " << (*dir_ / "gen.log");
  }

  static const json& Case(const std::string& name) {
    for (const json& c : *cases_)
      if (c["name"] == name) return c;
    throw std::runtime_error("no case " + name);
  }

  static TorchComparison Compare(const json& c) {
    auto model = Model::Load(c["onnx"].get<std::string>());
    EXPECT_TRUE(model) << model.error().message();
    auto dump = LoadTorchDump(c["dump"].get<std::string>());
    EXPECT_TRUE(dump) << dump.error().message();
    auto result = CompareWithTorch(*model, *dump, RunConfig{}, {});
    EXPECT_TRUE(result) << result.error().message();
    return result ? std::move(*result) : TorchComparison{};
  }

  static inline fs::path* dir_ = nullptr;
  static inline json* cases_ = nullptr;
  static inline int status_ = -1;
};

TEST_F(AlignmentOnExports, HealthyExportsAlignAndDoNotDiverge) {
  for (const std::string name :
       {"conv_bn_relu", "resnet18", "mobilenet_v3_small", "tiny_transformer", "tuple_twice", "yolo_like"}) {
    SCOPED_TRACE(name);
    const json& c = Case(name);
    const TorchComparison result = Compare(c);
    ASSERT_EQ(result.layers.size(), c["truth"].size());
    const Score leaves = ScoreCase(result, c["truth"], true);
    const Score containers = ScoreCase(result, c["truth"], false);
    std::printf(
        "  %-20s leaves %d/%d aligned right (%.0f%%), %d wrong, %d unaligned; containers %d/%d, %d wrong\n",
        name.c_str(), leaves.right, leaves.total, 100 * leaves.rate(), leaves.wrong, leaves.unaligned,
        containers.right, containers.total, containers.wrong);
    for (const auto& p : leaves.problems) std::printf("    leaf %s\n", p.c_str());
    for (const auto& p : containers.problems) std::printf("    container %s\n", p.c_str());
    EXPECT_GE(leaves.rate(), 0.9);
    EXPECT_EQ(leaves.wrong, 0);
    EXPECT_EQ(containers.wrong, 0);
    EXPECT_FALSE(result.first_divergence)
        << "diverges at " << result.layers[*result.first_divergence].alignment.module << ": "
        << result.layers[*result.first_divergence].reason;
    EXPECT_TRUE(result.passed());
  }
}

TEST_F(AlignmentOnExports, FoldedBatchNormIsExplained) {
  const TorchComparison result = Compare(Case("conv_bn_relu"));
  ASSERT_EQ(result.layers.size(), 3u);
  const LayerAlignment& conv = result.layers[0].alignment;
  const LayerAlignment& bn = result.layers[1].alignment;
  EXPECT_EQ(conv.how, AlignHow::kNone);
  EXPECT_TRUE(conv.folded);
  EXPECT_NE(conv.reason.find("folded"), std::string::npos) << conv.reason;
  EXPECT_NE(conv.reason.find("'bn'"), std::string::npos) << conv.reason;
  EXPECT_EQ(bn.how, AlignHow::kName);  // by structure, not by value
  EXPECT_EQ(bn.node, "/conv/Conv");
  EXPECT_EQ(result.layers[0].status, Verdict::kUnchecked);
  EXPECT_EQ(result.layers[1].status, Verdict::kPass);
}

TEST_F(AlignmentOnExports, TupleOutputsAndRepeatedCalls) {
  const TorchComparison result = Compare(Case("tuple_twice"));
  std::map<std::string, const LayerAlignment*> by;
  for (const auto& v : result.layers)
    by[fmt::format("{}#{}#{}", v.alignment.module, v.alignment.call, v.alignment.output_index.value_or(-1))] =
        &v.alignment;
  // TupleTwice (python/tests/zoo/models.py): fc and act twice each, halves' two outputs, head.
  ASSERT_EQ(by.size(), 2u + 2 + 2 + 1);
  EXPECT_EQ(by["act#0#-1"]->tensor, "h");  // the graph output's real name
  EXPECT_EQ(by["act#1#-1"]->node, "/act_1/Relu");
  EXPECT_EQ(by["fc#1#-1"]->node, "/fc_1/Gemm");
  EXPECT_EQ(by["halves#0#0"]->node, "/halves/Slice");
  EXPECT_EQ(by["halves#0#1"]->node, "/halves/Slice_1");
  for (const auto& [key, a] : by) EXPECT_EQ(a->how, AlignHow::kName) << key;
  EXPECT_TRUE(result.passed());
}

TEST_F(AlignmentOnExports, PlantedFaultsAreLocatedAtTheModule) {
  for (const std::string name : {"yolo_like_resize_linear", "resnet18_leaky_relu"}) {
    SCOPED_TRACE(name);
    const json& c = Case(name);
    const TorchComparison result = Compare(c);
    ASSERT_TRUE(result.first_divergence);
    const LayerVerdict& first = result.layers[*result.first_divergence];
    std::printf("  %-24s first divergence: %s (call %lld) at node %s, %s\n", name.c_str(),
                first.alignment.module.c_str(), static_cast<long long>(first.alignment.call),
                first.alignment.node.c_str(), first.reason.c_str());
    EXPECT_EQ(first.alignment.module, c["fault"]["module"].get<std::string>());
    EXPECT_EQ(first.alignment.call, c["fault"]["call"].get<int64_t>());
    EXPECT_EQ(first.alignment.node, c["fault"]["node"].get<std::string>());
    EXPECT_FALSE(result.passed());
    // Downstream of the fault values disagree, yet folded Convs are still told by structure.
    int folded = 0, truth_folded = 0;
    for (const auto& v : result.layers) folded += v.alignment.folded;
    for (const json& t : c["truth"]) truth_folded += t["kind"] == "folded";
    EXPECT_EQ(folded, truth_folded);
    // The module the report names (report/json/torch_json.cc): the divergent op's when one was found.
    const std::string& module = result.divergent_op ? result.divergent_op->module : first.alignment.module;
    EXPECT_EQ(module, c["fault"]["module"].get<std::string>());
  }
}

TEST_F(AlignmentOnExports, CommandLineExitCodesAndJson) {
  auto run = [](const std::string& args) {
    const int rc = std::system(fmt::format("'{}' align {} >/dev/null 2>&1", PARITY_BINARY, args).c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  const json& healthy = Case("tuple_twice");
  const json& faulty = Case("yolo_like_resize_linear");
  const fs::path report = *dir_ / "align.json";
  EXPECT_EQ(run(fmt::format("'{}' --torch '{}'", healthy["onnx"].get<std::string>(),
                            healthy["dump"].get<std::string>())),
            0);
  EXPECT_EQ(run(fmt::format("'{}' --torch '{}' --json '{}'", faulty["onnx"].get<std::string>(),
                            faulty["dump"].get<std::string>(), report.string())),
            1);
  std::ifstream in(report);
  const json j = json::parse(in);
  EXPECT_EQ(j["schema"], "parity.align/1");
  EXPECT_EQ(j["first_divergence"]["module"], "up");
  EXPECT_EQ(j["first_divergence"]["node"], "/up/Resize");
  EXPECT_EQ(
      run(fmt::format("'{}' --torch '{}'", healthy["onnx"].get<std::string>(), (*dir_ / "missing").string())),
      2);
  EXPECT_EQ(run(fmt::format("'{}' --torch '{}'", healthy["onnx"].get<std::string>(),
                            faulty["dump"].get<std::string>())),
            2);  // the dump's inputs do not fit the model
}

}  // namespace
}  // namespace parity
