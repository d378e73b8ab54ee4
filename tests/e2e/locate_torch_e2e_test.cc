// `parity locate --reference torch:DIR` through the real binary: a healthy
// export passes; an exporter-level fault (an activation swapped in the ONNX
// file) is reported at the right module path with its ONNX node.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "e2e_util.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

bool HaveTorch() {
  return e2e::RunProgram({PARITY_PYTHON, "-c", "import torch, onnx"}).exit_code == 0;
}

TEST(LocateTorch, NamesTheModuleOfAnExporterFault) {
  ASSERT_TRUE(HaveTorch()) << PARITY_PYTHON " lacks torch or onnx (make creates .venv/)";
  const fs::path dir = e2e::MakeTempDir("parity-locate-torch");
  const std::string script = R"(
import os, sys, onnx
sys.path[:0] = [os.path.join(sys.argv[1], 'python'), os.path.join(sys.argv[1], 'python', 'tests')]
import torch, parity.torch
from zoo.models import ConvBnRelu
torch.manual_seed(0)
m = ConvBnRelu()
out = sys.argv[2]
parity.torch.export(m, (torch.randn(1, 3, 32, 32),), out + '/good.onnx', dump_dir=out + '/dump',
                    opset_version=18, input_names=['input'], output_names=['output'])
g = onnx.load(out + '/good.onnx')
for n in g.graph.node:
    if n.op_type == 'Relu':
        n.op_type = 'LeakyRelu'
onnx.save(g, out + '/bad.onnx')
)";
  auto gen = e2e::RunProgram({PARITY_PYTHON, "-c", script, PARITY_SOURCE_DIR, dir.string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;

  const std::string reference = "torch:" + (dir / "dump").string();
  auto good = e2e::RunParity({"locate", (dir / "good.onnx").string(), "--reference", reference});
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  EXPECT_NE(good.out.find("no divergent layer"), std::string::npos) << good.out;

  auto bad = e2e::RunParity(
      {"locate", (dir / "bad.onnx").string(), "--reference", reference, "--json", (dir / "l.json").string()});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  std::ifstream in(dir / "l.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["schema"], "parity.locate_torch/1");
  ASSERT_TRUE(j["first_divergence"].is_object()) << j.dump(2);
  EXPECT_EQ(j["first_divergence"]["module"], "relu");
  EXPECT_EQ(j["first_divergence"]["op_type"], "LeakyRelu");
  EXPECT_FALSE(j["alignment"].empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parity
