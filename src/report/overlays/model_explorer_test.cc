// Model Explorer node data (report/overlays/model_explorer.h): valid JSON whatever the
// node names, the adapter's node ids, the colours of pass / near / fail.
#include "report/overlays/model_explorer.h"

#include <gtest/gtest.h>

#include <limits>

#include <nlohmann/json.hpp>

namespace parity {
namespace {

using nlohmann::json;

const ModelExplorerFile* Find(const std::vector<ModelExplorerFile>& files, const std::string& name) {
  for (const auto& f : files)
    if (f.name == name) return &f;
  return nullptr;
}

LocateTensor Row(const std::string& name, const std::string& producer, Verdict status, double score,
                    const std::string& fused = "") {
  LocateTensor t{.name = name, .producer = producer, .fused_node = fused, .status = status};
  t.score = score;
  return t;
}

TEST(ModelExplorer, HostileNodeNamesStayValidJson) {
  const std::string hostile = "a\"b\\c\n</script><x>\x01\xff\xfe";
  LocateReport r;
  r.tensors.push_back(Row("t", hostile, Verdict::kFail, 3.0));
  r.fused_nodes.push_back({.name = hostile + "_fused", .op_type = "Conv\"", .nodes = {hostile + "_fused"},
                           .covers = {hostile}});
  r.optimized_graph = "not parsed here";
  const auto files = RenderModelExplorerFiles({.model = "m 'x'.onnx", .locate = &r}, "out dir");
  ASSERT_NE(Find(files, "original_error.json"), nullptr);
  // The view's files (not node data) stay valid JSON with the name whole.
  ASSERT_NE(Find(files, "sync_navigation.json"), nullptr);
  const json sync = json::parse(Find(files, "sync_navigation.json")->text);
  EXPECT_TRUE(sync["mappingEntries"][0]["rightNodeIds"][0].get<std::string>().ends_with("_fused"));
  ASSERT_NO_THROW((void)json::parse(Find(files, "view.json")->text));
  for (const auto& f : files) {
    if (!IsNodeDataFile(f.name)) continue;
    json j;
    ASSERT_NO_THROW(j = json::parse(f.text)) << f.name;
    ASSERT_EQ(j["results"].size(), 1u) << f.name;
    // Invalid UTF-8 became U+FFFD; everything else is the name itself.
    const std::string key = j["results"].begin().key();
    EXPECT_TRUE(key.starts_with("a\"b\\c\n</script><x>\x01")) << f.name;
    EXPECT_NE(key.find("\xEF\xBF\xBD"), std::string::npos) << f.name;
  }
  // The README's command quotes what the shell would split.
  EXPECT_NE(Find(files, "README.md")->text.find("model-explorer 'm '\\''x'\\''.onnx'"), std::string::npos)
      << Find(files, "README.md")->text;
}

TEST(ModelExplorer, ScoresAreColouredPassNearFailAndInfinityIsAFailure) {
  LocateReport r;
  r.tensors.push_back(Row("a", "A", Verdict::kPass, 0.2));
  r.tensors.push_back(Row("b", "B", Verdict::kPass, 0.9));
  r.tensors.push_back(Row("c", "C", Verdict::kFail, std::numeric_limits<double>::infinity()));
  r.tensors.push_back(Row("d", "D", Verdict::kFail, std::numeric_limits<double>::quiet_NaN()));
  r.tensors.push_back(Row("e", "E", Verdict::kUnchecked, 0));
  const auto files = RenderModelExplorerFiles({.model = "m.onnx", .locate = &r}, "d");
  const json error = json::parse(Find(files, "original_error.json")->text);
  EXPECT_EQ(error["results"]["A"]["value"], 0.2);
  EXPECT_EQ(error["results"]["C"]["value"], kModelExplorerScoreCap);
  EXPECT_EQ(error["results"]["D"]["value"], kModelExplorerScoreCap);
  EXPECT_FALSE(error["results"].contains("E"));  // unchecked: no error to show
  // value <= threshold picks the colour: 0.5 pass, 1 near, the cap fail.
  ASSERT_EQ(error["thresholds"].size(), 3u);
  EXPECT_EQ(error["thresholds"][1]["value"], 1.0);
  EXPECT_EQ(error["thresholds"][2]["value"], kModelExplorerScoreCap);
  EXPECT_NE(error["thresholds"][0]["bgColor"], error["thresholds"][2]["bgColor"]);
  const json status = json::parse(Find(files, "original_status.json")->text);
  EXPECT_EQ(status["results"]["C"]["value"], "fail");
  EXPECT_EQ(status["results"]["E"]["value"], "unchecked");
  EXPECT_EQ(status["results"]["C"]["bgColor"], error["thresholds"][2]["bgColor"]);
}

TEST(ModelExplorer, ANodeFailsWhenAnyOfItsOutputsFails) {
  LocateReport r;
  r.tensors.push_back(Row("a0", "A", Verdict::kFail, 5));
  r.tensors.push_back(Row("a1", "A", Verdict::kPass, 0.1));
  const auto files = RenderModelExplorerFiles({.model = "m.onnx", .locate = &r}, "d");
  EXPECT_EQ(json::parse(Find(files, "original_status.json")->text)["results"]["A"]["value"], "fail");
  EXPECT_EQ(json::parse(Find(files, "original_error.json")->text)["results"]["A"]["value"], 5.0);
}

TEST(ModelExplorer, UnnamedAndRepeatedNodesTakeTheAdaptersIds) {
  // File order: conv, <unnamed Relu>, dup, dup, <unnamed Add>, a node named "node".
  GraphView g;
  g.nodes.push_back({.name = "conv", .op_type = "Conv", .file_index = 0});
  g.nodes.push_back({.name = "Relu_1", .name_synthesized = true, .op_type = "Relu", .file_index = 1});
  g.nodes.push_back({.name = "dup", .op_type = "Add", .file_index = 2});
  g.nodes.push_back({.name = "dup_1", .name_synthesized = true, .op_type = "Add", .file_index = 3});
  g.nodes.push_back({.name = "node", .op_type = "Mul", .file_index = 5});  // topological order differs
  g.nodes.push_back({.name = "Add_4", .name_synthesized = true, .op_type = "Add", .file_index = 4});
  const auto ids = ModelExplorerNodeIds(g);
  EXPECT_EQ(ids.at("conv"), "conv");
  EXPECT_EQ(ids.at("Relu_1"), "node");
  EXPECT_EQ(ids.at("dup"), "dup");
  EXPECT_EQ(ids.at("dup_1"), "dup_1");
  EXPECT_EQ(ids.at("Add_4"), "node_1");
  EXPECT_EQ(ids.at("node"), "node_2");  // taken by then: renamed as a repeated name

  LocateReport r;
  for (const char* n : {"conv", "Relu_1"}) r.tensors.push_back(Row(n, n, Verdict::kPass, 0.1));
  const auto files = RenderModelExplorerFiles({.model = "m.onnx", .graph = &g, .locate = &r}, "d");
  const json error = json::parse(Find(files, "original_error.json")->text);
  EXPECT_EQ(error["results"].size(), 2u) << error.dump();
  EXPECT_TRUE(error["results"].contains("node"));
}

TEST(ModelExplorer, TheOptimizedGraphCarriesTheCulpritsLocalErrorAndWhatEachFusedNodeCovers) {
  LocateReport r;
  r.fused_nodes.push_back({.name = "fused_conv", .op_type = "FusedConv", .nodes = {"fused_conv", "reorder"},
                           .covers = {"conv", "relu"}});
  r.tensors.push_back(Row("y", "relu", Verdict::kFail, 4, "fused_conv"));
  LocateCulprit c{.fused_node = "fused_conv", .op_type = "FusedConv", .covers = {"conv", "relu"}};
  c.local = {.tensor = "y", .score = 3.5, .pass = false};
  r.culprits.push_back(c);
  auto files = RenderModelExplorerFiles({.model = "m.onnx", .locate = &r}, "d");
  EXPECT_EQ(Find(files, kOptimizedGraphName), nullptr);  // no optimized graph: nothing to open it on
  EXPECT_EQ(Find(files, "optimized_local.json"), nullptr);
  const json local = json::parse(Find(files, "original_local.json")->text);
  EXPECT_EQ(local["results"]["conv"]["value"], 3.5);

  r.optimized_graph = "bytes";
  files = RenderModelExplorerFiles({.model = "m.onnx", .locate = &r}, "d");
  ASSERT_NE(Find(files, kOptimizedGraphName), nullptr);
  EXPECT_EQ(Find(files, kOptimizedGraphName)->text, "bytes");
  const json opt = json::parse(Find(files, "optimized_local.json")->text);
  EXPECT_EQ(opt["results"]["fused_conv"]["value"], 3.5);
  EXPECT_EQ(opt["results"]["reorder"]["value"], 3.5);
  const json covers = json::parse(Find(files, "optimized_covers.json")->text);
  EXPECT_EQ(covers["results"]["fused_conv"]["value"], "2 nodes: conv, relu");
  const json fused = json::parse(Find(files, "original_fused.json")->text);
  EXPECT_EQ(fused["results"]["relu"]["value"], "fused_conv (FusedConv)");
  const std::string readme = Find(files, "README.md")->text;
  EXPECT_NE(readme.find("optimized.onnx --extensions=model_explorer_onnx --node_data_paths="), std::string::npos)
      << readme;
}

TEST(ModelExplorer, ADrillDownsLocalErrorStaysOnTheGroupItNarrowedTo) {
  LocateReport r;
  LocateCulprit c{.fused_node = "group", .covers = {"conv2", "add"}};
  c.local = {.tensor = "y", .score = 40, .pass = false};
  c.narrowing = LocateNarrowing{};
  c.narrowing->steps.push_back({.covers = {"conv1", "relu", "conv2", "add"}, .local = {.tensor = "y", .score = 41}});
  c.narrowing->steps.push_back({.covers = {"conv1", "relu"}, .local = {.tensor = "r", .score = 0.01}});
  c.narrowing->steps.push_back({.covers = {"conv2", "add"}, .local = {.tensor = "y", .score = 40}});
  r.culprits.push_back(c);
  const auto files = RenderModelExplorerFiles({.model = "m.onnx", .locate = &r}, "d");
  const json local = json::parse(Find(files, "original_local.json")->text)["results"];
  EXPECT_EQ(local["conv2"]["value"], 40.0);
  EXPECT_EQ(local["conv1"]["value"], 0.01);  // its own half, measured: no error of its own
  // Without that half's measurement conv1 would have none (not the region's 41).
  r.culprits[0].narrowing->steps.erase(r.culprits[0].narrowing->steps.begin() + 1);
  const auto again = RenderModelExplorerFiles({.model = "m.onnx", .locate = &r}, "d");
  EXPECT_FALSE(json::parse(Find(again, "original_local.json")->text)["results"].contains("conv1"));
}

TEST(ModelExplorer, QuantizedLayersGetSqnrAndSteps) {
  QuantReport q{.kind = "qdq"};
  QuantLayer l{.node = "conv", .op_type = "Conv", .module = "layer1.conv", .step = 0.1};
  l.cumulative = {.measured = true, .sqnr_db = 25};
  l.local = {.measured = true, .sqnr_db = std::numeric_limits<double>::infinity(), .max_steps = 3};
  q.layers.push_back(l);
  const auto files = RenderModelExplorerFiles({.model = "m.onnx", .quant = &q}, "d");
  EXPECT_EQ(json::parse(Find(files, "quant_sqnr.json")->text)["results"]["conv"]["value"], 25.0);
  EXPECT_EQ(json::parse(Find(files, "quant_local_sqnr.json")->text)["results"]["conv"]["value"],
            kModelExplorerScoreCap);  // identical: the best SQNR there is
  EXPECT_EQ(json::parse(Find(files, "quant_local_steps.json")->text)["results"]["conv"]["value"], 3.0);
  EXPECT_EQ(json::parse(Find(files, "original_module.json")->text)["results"]["conv"]["value"], "layer1.conv");
}

TEST(ModelExplorer, ADatasetShowsWhereLocatedSamplesFirstDivergeInThirdsOfTheMost) {
  DatasetReport d;
  d.ranking.push_back({.fused_node = "f", .node = "conv", .samples = 7, .flips = 2});
  d.ranking.push_back({.fused_node = "g", .covers = {"a", "b"}, .samples = 1});
  const auto files = RenderModelExplorerFiles({.model = "m.onnx", .dataset = &d}, "d");
  const json first = json::parse(Find(files, "dataset_first_divergence.json")->text);
  EXPECT_EQ(first["results"]["conv"]["value"], 7.0);
  EXPECT_EQ(first["results"]["b"]["value"], 1.0);
  ASSERT_EQ(first["thresholds"].size(), 3u);
  EXPECT_EQ(first["thresholds"][2]["value"], 7.0);  // the most is coloured, even when it is the only value
  EXPECT_LT(first["thresholds"][0]["value"].get<double>(), 7.0);
  EXPECT_EQ(json::parse(Find(files, "dataset_flips.json")->text)["results"].size(), 1u);
}

}  // namespace
}  // namespace parity
