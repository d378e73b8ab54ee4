// Bad inputs through the real binary (docs/errors.md): each is refused with
// exit 2 and one stderr line naming the file and the problem, quickly and in
// little memory, never by allocating what the file claims. And an
// interrupted run leaves no partial file behind.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/npz.h"
#include "core/tensor.h"
#include "core/tensor_files.h"
#include "engine/run/tensor_source.h"
#include "e2e_util.h"
#include "proto_wire.h"
#include "onnx/builder.h"
#include "onnx/model.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// "Within a second" is measured as the child's CPU time (user + system),
// which a loaded CI machine does not inflate; wall time only has to stay
// sane. Under ASan the slower allocator raises the CPU time, and resident
// memory is mostly the sanitizer's (not checked there, see e2e::kSanitized);
// the numbers that matter are those of the normal build.
constexpr int64_t kMaxRssBytes = int64_t{100} << 20;
constexpr double kMaxCpuSeconds = e2e::kSanitized ? 5.0 : 1.0;
constexpr double kMaxWallSeconds = 20.0;

using Measured = e2e::ProcessResult;
using e2e::RunParity;

using e2e::Pb;  // proto_wire.h

// onnx.proto field numbers used below.
namespace tp {  // TensorProto
constexpr int kDims = 1, kDataType = 2, kName = 8, kRawData = 9;
}
namespace mp {  // ModelProto, GraphProto, NodeProto, ValueInfoProto, OperatorSetIdProto
constexpr int kIrVersion = 1, kGraph = 7, kOpsetImport = 8;
constexpr int kGraphNode = 1, kGraphName = 2, kGraphInput = 11, kGraphOutput = 12;
constexpr int kNodeInput = 1, kNodeOutput = 2, kNodeName = 3, kNodeOpType = 4;
constexpr int kValueInfoName = 1, kOpsetVersion = 2;
}  // namespace mp

Pb Node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
        const std::string& output) {
  Pb n;
  for (const auto& in : inputs) n.Bytes(mp::kNodeInput, in);
  n.Bytes(mp::kNodeOutput, output).Bytes(mp::kNodeName, name).Bytes(mp::kNodeOpType, op);
  return n;
}

Pb ModelWithGraph(const Pb& graph) {
  Pb opset;
  opset.Int(mp::kOpsetVersion, 17);
  Pb model;
  model.Int(mp::kIrVersion, 8).Msg(mp::kGraph, graph).Msg(mp::kOpsetImport, opset);
  return model;
}

void WriteBytes(const fs::path& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

class Robustness : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = e2e::MakeTempDir("parity-robustness");
    // y = Relu(x), x: float32 [4]: a valid model for the input-side cases.
    ModelBuilder b;
    b.Output(b.Relu(b.Input("x", DType::kFloat32, Shape{4})), "y");
    auto model = b.Build();
    ASSERT_TRUE(model) << model.error().message();
    model_ = dir_ / "model.onnx";
    ASSERT_TRUE(model->Save(model_));
    TensorSet set;
    set.Set("x", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, -2, 3, -4}));
    ASSERT_TRUE(SaveTensors(dir_ / "x.npz", set));
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // The contract of docs/errors.md for one bad input.
  void ExpectRefused(const Measured& r, const fs::path& file, const std::string& problem) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    const auto lines = e2e::Lines(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_TRUE(lines[0].starts_with("parity: error: ")) << lines[0];
    EXPECT_NE(lines[0].find(file.string()), std::string::npos) << "the message should name " << file << ": "
                                                               << lines[0];
    EXPECT_NE(lines[0].find(problem), std::string::npos) << lines[0];
    EXPECT_LT(r.cpu_seconds, kMaxCpuSeconds) << lines[0];
    EXPECT_LT(r.wall_seconds, kMaxWallSeconds) << lines[0];
    if (!e2e::kSanitized) {
      EXPECT_LT(r.peak_rss_bytes, kMaxRssBytes) << lines[0];
    }
    EXPECT_EQ(r.out, "");
  }

  std::vector<std::string> RunArgs(const fs::path& inputs) {
    return {"run", model_.string(), "--inputs", inputs.string(), "-o", (dir_ / "out.npz").string()};
  }

  fs::path dir_;
  fs::path model_;
};

TEST_F(Robustness, NpyDeclaringTenToTheTwelveElementsIsRefusedBeforeAllocation) {
  const fs::path npy = dir_ / "huge.npy";
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }";
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict.push_back('\n');
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(dict.size() & 0xff));
  file.push_back(static_cast<char>(dict.size() >> 8));
  file += dict;
  file.append(16, '\0');  // 16 bytes of the 4 TB it claims
  WriteBytes(npy, file);
  const Measured r = RunParity(RunArgs(npy));
  ExpectRefused(r, npy, "header declares 4000000000000 bytes of data");
  EXPECT_FALSE(fs::exists(dir_ / "out.npz"));
}

TEST_F(Robustness, NpzZipBombIsRefusedWithoutInflatingIt) {
  // bomb.npz: entry x.npy declares 1,128 bytes (a valid .npy of 1000 uint8
  // inside) while its deflate stream inflates to over 256 MB.
  const fs::path npz = dir_ / "bomb.npz";
  const std::string script = R"py(
import struct, sys, zipfile
hdr = b"\x93NUMPY\x01\x00v\x00{'descr': '|u1', 'fortran_order': False, 'shape': (1000,), }"
hdr += b" " * (127 - len(hdr)) + b"\n"
declared = len(hdr) + 1000
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("x.npy", "w") as f:
        f.write(hdr)
        chunk = bytes(1 << 20)
        for _ in range(256):
            f.write(chunk)
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", b, 22, declared)
c = b.rfind(b"PK\x01\x02")
struct.pack_into("<I", b, c + 24, declared)
open(sys.argv[1], "wb").write(b)
)py";
  const e2e::ProcessResult py = e2e::RunProgram({PARITY_PYTHON, "-c", script, npz.string()});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  ASSERT_LT(fs::file_size(npz), 2u << 20);
  const Measured r = RunParity(RunArgs(npz));
  ExpectRefused(r, npz, "decompresses to more than its declared 1128 bytes");
}

TEST_F(Robustness, NpzEntryDeclaringMoreThanDeflateCanProduceIsRefusedBeforeAllocation) {
  // lie.npz: a 1 KB deflated entry whose zip headers (and the .npy header
  // inside) declare 800 MB: below every size limit, but impossible.
  const fs::path npz = dir_ / "lie.npz";
  const std::string script = R"py(
import struct, sys, zipfile
n = 800 * 1000 * 1000
hdr = b"\x93NUMPY\x01\x00v\x00{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % n
hdr += b" " * (127 - len(hdr)) + b"\n"
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("x.npy", hdr + bytes(1000))
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", b, 22, len(hdr) + n)
c = b.rfind(b"PK\x01\x02")
struct.pack_into("<I", b, c + 24, len(hdr) + n)
open(sys.argv[1], "wb").write(b)
)py";
  const e2e::ProcessResult py = e2e::RunProgram({PARITY_PYTHON, "-c", script, npz.string()});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  const Measured r = RunParity(RunArgs(npz));
  ExpectRefused(r, npz, "more than deflate can produce");
}

TEST_F(Robustness, TensorProtoWithNegativeDimensionIsRefused) {
  const fs::path pb = dir_ / "neg.pb";
  Pb t;
  t.Int(tp::kDims, -4).Int(tp::kDataType, 1).Bytes(tp::kName, "x").Bytes(tp::kRawData, std::string(16, '\0'));
  WriteBytes(pb, t.bytes);
  const Measured r = RunParity(RunArgs(pb));
  ExpectRefused(r, pb, "negative dimension -4");
}

TEST_F(Robustness, TensorProtoDeclaringAHugeShapeIsRefused) {
  const fs::path pb = dir_ / "huge.pb";
  Pb t;
  t.Int(tp::kDims, 1000000).Int(tp::kDims, 1000000).Int(tp::kDataType, 1).Bytes(tp::kName, "x");
  t.Bytes(tp::kRawData, std::string(16, '\0'));
  WriteBytes(pb, t.bytes);
  const Measured r = RunParity(RunArgs(pb));
  ExpectRefused(r, pb, "raw_data has 16 bytes, shape [1000000, 1000000]");
}

TEST_F(Robustness, ModelReadingAnUndefinedTensorIsRefused) {
  const fs::path onnx = dir_ / "undefined.onnx";
  Pb x, y, g;
  x.Bytes(mp::kValueInfoName, "x");
  y.Bytes(mp::kValueInfoName, "y");
  g.Msg(mp::kGraphNode, Node("add", "Add", {"x", "ghost"}, "y")).Bytes(mp::kGraphName, "g");
  g.Msg(mp::kGraphInput, x).Msg(mp::kGraphOutput, y);
  WriteBytes(onnx, ModelWithGraph(g).bytes);
  const Measured r = RunParity({"inspect", onnx.string()});
  ExpectRefused(r, onnx, "node 'add' (Add) reads tensor 'ghost'");
}

TEST_F(Robustness, ConfigJsonWithWrongTypesIsRefused) {
  const fs::path config = dir_ / "config.json";
  WriteBytes(config, R"({"opt": "all", "intra_op_threads": "four"})");
  auto args = RunArgs(dir_ / "x.npz");
  args.insert(args.end(), {"--config", config.string()});
  const Measured r = RunParity(args);
  ExpectRefused(r, config, "intra_op_threads");
}

TEST_F(Robustness, TruncatedModelIsRefused) {
  const fs::path onnx = dir_ / "truncated.onnx";
  const auto bytes = [&] {
    std::ifstream f(model_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  WriteBytes(onnx, bytes.substr(0, bytes.size() / 2));
  const Measured r = RunParity({"inspect", onnx.string()});
  ExpectRefused(r, onnx, "not a valid ONNX model");
}

TEST_F(Robustness, DeeplyNestedSubgraphsAreRefusedWithoutStackOverflow) {
  // 5,000 nested If nodes: protobuf's recursion limit refuses the file long
  // before any recursive walk of parity's could run out of stack.
  Pb graph;
  graph.Bytes(mp::kGraphName, "leaf");
  for (int depth = 0; depth < 5000; ++depth) {
    Pb attr;  // AttributeProto: name = 1, g = 6, type = 20 (GRAPH = 5)
    attr.Bytes(1, "then_branch").Msg(6, graph).Int(20, 5);
    Pb node = Node("if" + std::to_string(depth), "If", {"c"}, "o");
    node.Msg(5, attr);
    Pb outer;
    outer.Msg(mp::kGraphNode, node).Bytes(mp::kGraphName, "g" + std::to_string(depth));
    graph = std::move(outer);
  }
  const fs::path onnx = dir_ / "deep.onnx";
  WriteBytes(onnx, ModelWithGraph(graph).bytes);
  const Measured r = RunParity({"inspect", onnx.string()});
  ExpectRefused(r, onnx, "not a valid ONNX model");
}

// Found by the model fuzz target: ONNX 1.12's shape inference segfaults on
// this malformed Conv; parity reports the checker's error and skips inference.
TEST_F(Robustness, ModelThatCrashedShapeInferenceIsInspected) {
  const fs::path crash = fs::path(PARITY_SOURCE_DIR) / "fuzz/crashes/model_conv_shape_inference_segv.onnx";
  auto r = e2e::RunParity({"inspect", crash.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("shape_inference: skipped: the checker found errors"), std::string::npos) << r.out;
}

TEST_F(Robustness, LongChainOfNodesIsInspectedWithoutStackOverflow) {
  // 200,000 Identity nodes in one chain: no recursion over the graph depth.
  constexpr int kNodes = 200000;
  Pb g;
  Pb x, y;
  x.Bytes(mp::kValueInfoName, "t0");
  y.Bytes(mp::kValueInfoName, "t" + std::to_string(kNodes));
  for (int i = 0; i < kNodes; ++i)
    g.Msg(mp::kGraphNode,
          Node("n" + std::to_string(i), "Identity", {"t" + std::to_string(i)}, "t" + std::to_string(i + 1)));
  g.Bytes(mp::kGraphName, "chain").Msg(mp::kGraphInput, x).Msg(mp::kGraphOutput, y);
  const fs::path onnx = dir_ / "chain.onnx";
  WriteBytes(onnx, ModelWithGraph(g).bytes);
  const Measured r = RunParity({"inspect", onnx.string()});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.exit_code << "\n" << r.err;
  EXPECT_NE(r.out.find("200000"), std::string::npos) << r.out.substr(0, 2000);
}


}  // namespace
}  // namespace parity
