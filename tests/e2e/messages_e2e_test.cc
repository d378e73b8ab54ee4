// Issue 28's individual messages, through the real binary: each behaviour a
// new user met and found wrong, asserted with its exit code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/npz.h"
#include "e2e_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// The Reshape model (e2e::WriteReshapeModel) with a sample it runs and one
// it cannot.
const char* kGoodAndBadReshape =
    "**{'good/x': np.ones((2, 8), np.float32), 'good/s': np.array([4, 4], np.int64), "
    "'bad/x': np.ones((2, 8), np.float32), 'bad/s': np.array([3, 5], np.int64)}";

TEST(Messages, RunWritesTheSamplesThatRanAndNamesTheRefusedOne) {
  const fs::path dir = e2e::MakeTempDir("parity-run-partial");
  auto gen = e2e::WriteReshapeModel(dir.string(), kGoodAndBadReshape);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto run = e2e::RunParity({"run", (dir / "m.onnx").string(), "--inputs", (dir / "in.npz").string(), "-o",
                             (dir / "o.npz").string()});
  EXPECT_EQ(run.exit_code, 3) << run.err;  // not every sample ran
  EXPECT_NE(run.err.find("1 of 2 sample(s) refused and not written ('bad')"), std::string::npos) << run.err;
  EXPECT_EQ(e2e::Lines(run.err).size(), 1u) << run.err;
  auto written = ReadNpz(dir / "o.npz");
  ASSERT_TRUE(written) << "the sample that ran is written";
  EXPECT_TRUE(written->Contains("good/y"));
  EXPECT_FALSE(written->Contains("bad/y"));
  fs::remove_all(dir);
}

TEST(Messages, TorchGivenAFileSaysItIsAFileNotThatItDoesNotExist) {
  const fs::path dir = e2e::MakeTempDir("parity-torch-file");
  auto gen = e2e::WriteReshapeModel(dir.string(), kGoodAndBadReshape);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto check = e2e::RunParity({"check", (dir / "m.onnx").string(), "--torch", (dir / "in.npz").string()});
  EXPECT_EQ(check.exit_code, 2) << check.err;
  EXPECT_NE(check.err.find("is a file, not a PyTorch dump directory"), std::string::npos) << check.err;
  EXPECT_EQ(check.err.find("no such directory"), std::string::npos) << check.err;
  fs::remove_all(dir);
}

// docs/errors.md: `input_<X>` (the file name of PyTorch dump directories)
// binds to input X, so a dump folder is an inputs folder; its outputs and
// layers are not inputs, and its samples at other sizes are samples.
TEST(Messages, InputsTakesAPyTorchDumpDirectory) {
  const fs::path dir = e2e::MakeTempDir("parity-inputs-dump");
  auto gen = e2e::RunProgram({PARITY_PYTHON, "-c", R"(
import os, sys, json, numpy as np, onnx
from onnx import helper, TensorProto
d = sys.argv[1]
x = helper.make_tensor_value_info('images', TensorProto.FLOAT, ['n', 4])
y = helper.make_tensor_value_info('y', TensorProto.FLOAT, ['n', 4])
g = helper.make_graph([helper.make_node('Relu', ['images'], ['y'], name='relu')], 'g', [x], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.save(m, d + '/m.onnx')
dump = d + '/dump'
os.makedirs(dump + '/sizes/batch3')
np.save(dump + '/input_images.npy', np.ones((1, 4), np.float32))
np.save(dump + '/output_y.npy', np.ones((1, 4), np.float32))
np.save(dump + '/layer_0000_relu.npy', np.ones((1, 4), np.float32))
np.save(dump + '/sizes/batch3/input_images.npy', np.ones((3, 4), np.float32))
np.save(dump + '/sizes/batch3/output_y.npy', np.ones((3, 4), np.float32))
json.dump({'schema': 'parity.torch_dump/1'}, open(dump + '/manifest.json', 'w'))
)",
                                    dir.string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto run = e2e::RunParity({"run", (dir / "m.onnx").string(), "--inputs", (dir / "dump").string(), "-o",
                             (dir / "o.npz").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("2 sample(s)"), std::string::npos) << run.out;
  auto written = ReadNpz(dir / "o.npz");
  ASSERT_TRUE(written);
  EXPECT_TRUE(written->Contains("traced/y"));
  ASSERT_TRUE(written->Contains("batch3/y"));
  EXPECT_EQ(written->Find("batch3/y")->shape(), (Shape{3, 4}));
  fs::remove_all(dir);
}

// Two outputs of different sizes declared with the same symbol: the file
// contradicts itself, and check says so.
// The values are not affected: a warning (exit 0) unless --strict (exit 1).
TEST(Messages, CheckWarnsOfOutputsDeclaredWithOneSymbolButOfTwoSizes) {
  const fs::path dir = e2e::MakeTempDir("parity-symbols");
  auto gen = e2e::RunProgram({PARITY_PYTHON, "-c", R"(
import sys, numpy as np, onnx
from onnx import helper, TensorProto
x = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['n', 4])
y = helper.make_tensor_value_info('y', TensorProto.FLOAT, ['n', 4])
z = helper.make_tensor_value_info('z', TensorProto.FLOAT, ['n', 4])
nodes = [helper.make_node('Relu', ['x'], ['y'], name='relu'),
         helper.make_node('Concat', ['x', 'x'], ['z'], name='twice', axis=0)]
g = helper.make_graph(nodes, 'g', [x], [y, z])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.save(m, sys.argv[1] + '/m.onnx')
)",
                                    dir.string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto check = e2e::RunParity({"check", (dir / "m.onnx").string(), "--runs", "1", "--warmup", "0", "--no-locate"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("warning: signature.declared_shapes"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("symbol 'n' is "), std::string::npos) << check.out;
  auto strict = e2e::RunParity(
      {"check", (dir / "m.onnx").string(), "--runs", "1", "--warmup", "0", "--no-locate", "--strict"});
  EXPECT_EQ(strict.exit_code, 1) << strict.out << strict.err;
  EXPECT_NE(strict.out.find("signature.declared_shapes"), std::string::npos) << strict.out;
  fs::remove_all(dir);
}

// The outputs differ from PyTorch but no aligned layer does: the divergence
// is said to lie after the last agreeing layer the failing output is computed
// from, not after the last agreeing layer of the whole run.
TEST(Messages, AnUnexplainedDivergenceLiesAfterALayerOfItsOwnOutput) {
  const fs::path dir = e2e::MakeTempDir("parity-unexplained");
  auto gen = e2e::RunProgram({PARITY_PYTHON, "-c", R"(
import os, sys, json, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
d = sys.argv[1]
x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 8])
y8 = helper.make_tensor_value_info('y8', TensorProto.FLOAT, [2, 8])
y32 = helper.make_tensor_value_info('y32', TensorProto.FLOAT, [2, 8])
two = numpy_helper.from_array(np.array(2.0, np.float32), 'two')
nodes = [helper.make_node('Sin', ['x'], ['h8'], name='head8'),
         helper.make_node('Mul', ['h8', 'two'], ['y8'], name='post8'),
         helper.make_node('Cos', ['x'], ['y32'], name='head32')]
g = helper.make_graph(nodes, 'g', [x], [y8, y32], initializer=[two])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.save(m, d + '/m.onnx')
dump = d + '/dump'
os.makedirs(dump)
xv = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
h8, h32 = np.sin(xv), np.cos(xv)
np.save(dump + '/input_x.npy', xv)
np.save(dump + '/layer_0000_head8.npy', h8)
np.save(dump + '/layer_0001_head32.npy', h32)
np.save(dump + '/output_y8.npy', h8 * 3)  # PyTorch multiplies by 3: the export's post-op differs
np.save(dump + '/output_y32.npy', h32)
layer = lambda f, mod: {'file': f, 'module': mod, 'type': 'Head', 'call': 0, 'output_index': None,
                        'dtype': 'float32', 'shape': [2, 8]}
json.dump({'schema': 'parity.torch_dump/1', 'torch_version': '2', 'inputs': {'x': 'input_x.npy'},
           'outputs': {'y8': 'output_y8.npy', 'y32': 'output_y32.npy'},
           'layers': [layer('layer_0000_head8.npy', 'head8'), layer('layer_0001_head32.npy', 'head32')]},
          open(dump + '/manifest.json', 'w'))
)",
                                    dir.string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  auto align = e2e::RunParity({"align", (dir / "m.onnx").string(), "--torch", (dir / "dump").string()});
  EXPECT_NE(align.out.find("after 'head8'"), std::string::npos) << align.out << align.err;
  EXPECT_EQ(align.out.find("after 'head32'"), std::string::npos) << align.out;
  fs::remove_all(dir);
}

// A 3x3 convolution without padding refuses the generated 1x1 boundary
// sample, even unfused: an expected refusal. The report passes, its
// failed-tests list is empty in every format, the refusal is listed apart,
// and signature.accepts does not say the model accepts what ORT refused.
TEST(Messages, APassingCheckWithAnExpectedRefusalListsNoFailedTestInAnyFormat) {
  const fs::path dir = e2e::MakeTempDir("parity-refusal");
  auto gen = e2e::RunProgram({PARITY_PYTHON, "-c", R"(
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
x = helper.make_tensor_value_info('images', TensorProto.FLOAT, ['n', 3, 'h', 'w'])
y = helper.make_tensor_value_info('y', TensorProto.FLOAT, ['n', 4, 'h2', 'w2'])
w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32), 'w')
g = helper.make_graph([helper.make_node('Conv', ['images', 'w'], ['y'], name='conv', kernel_shape=[3, 3])],
                      'g', [x], [y], initializer=[w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.save(m, sys.argv[1] + '/m.onnx')
)",
                                    dir.string()});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const fs::path report = dir / "report";
  auto check = e2e::RunParity({"check", (dir / "m.onnx").string(), "--runs", "1", "--warmup", "0", "--report",
                               report.string()});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out.find("failed tests"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("expected refusals ("), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("PyTorch was not consulted"), std::string::npos) << check.out;
  std::ifstream jf(report / "report.json");
  const auto j = nlohmann::json::parse(jf);
  EXPECT_TRUE(j["failed_tests"].empty()) << j["failed_tests"].dump();
  ASSERT_FALSE(j["expected_refusals"].empty());
  bool accepts_checked = false;
  for (const auto& f : j["stages"]["signature"]["findings"]) {
    const std::string id = f["id"];
    for (const auto& refused : j["expected_refusals"])
      if (id == "signature.accepts." + refused["sample"].get<std::string>()) {
        accepts_checked = true;
        EXPECT_EQ(f["status"], "SKIPPED") << f.dump();
        EXPECT_NE(f["message"].get<std::string>().find("but ONNX Runtime refused it"), std::string::npos) << f.dump();
      }
  }
  EXPECT_TRUE(accepts_checked) << j["stages"]["signature"].dump();
  std::stringstream html, junit;
  html << std::ifstream(report / "report.html").rdbuf();
  junit << std::ifstream(report / "junit.xml").rdbuf();
  EXPECT_NE(html.str().find("No failed tests."), std::string::npos);
  EXPECT_NE(html.str().find("Expected refusals ("), std::string::npos);
  EXPECT_NE(junit.str().find("<testsuites name=\"parity check "), std::string::npos);
  EXPECT_NE(junit.str().find("failures=\"0\" errors"), std::string::npos) << junit.str().substr(0, 400);
  EXPECT_EQ(junit.str().find("<failure"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parity
