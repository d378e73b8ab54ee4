// Issue 46, class 2: a 1.7 KB model whose local functions each call the next
// twice hung `inspect`, `check` and `run` (ONNX's shape inference and ORT
// inline them: 2^levels nodes). Its expanded size is estimated without
// inlining and refused at load above kMaxExpandedNodes.
#include "onnx/function_cost.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "onnx/model.h"
#include "onnx/test_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// y = f0(x): f_i calls f_{i+1} twice (`calls` times), the last is a Relu.
// `back_to`: the last function calls f_{back_to} instead (a cycle).
onnx::ModelProto Doubling(int levels, int calls = 2, int back_to = -1) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* local = m.add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name("g");
  for (auto* v : {g->add_input(), g->add_output()}) {
    v->set_name(v == &g->input(0) ? "x" : "y");
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  }
  auto* call = g->add_node();
  call->set_op_type("f0");
  call->set_domain("local");
  call->add_input("x");
  call->add_output("y");
  for (int i = 0; i < levels; ++i) {
    auto* f = m.add_functions();
    f->set_name("f" + std::to_string(i));
    f->set_domain("local");
    f->add_input("a");
    f->add_output("b");
    f->add_opset_import()->set_version(17);
    auto* fl = f->add_opset_import();
    fl->set_domain("local");
    fl->set_version(1);
    const bool last = i + 1 == levels;
    if (last && back_to < 0) {
      auto* n = f->add_node();
      n->set_op_type("Relu");
      n->add_input("a");
      n->add_output("b");
      continue;
    }
    const std::string next = "f" + std::to_string(last ? back_to : i + 1);
    std::string in = "a";
    for (int c = 0; c < calls; ++c) {
      auto* n = f->add_node();
      n->set_op_type(next);
      n->set_domain("local");
      n->add_input(in);
      in = c + 1 == calls ? "b" : "t" + std::to_string(c);
      n->add_output(in);
    }
  }
  return m;
}

fs::path Save(const onnx::ModelProto& m, const fs::path& path) {
  std::string bytes;
  m.SerializeToString(&bytes);
  testing::WriteRaw(path, bytes);
  return path;
}

TEST(FunctionCost, CountsTheInlinedGraphExactlyWithoutInlining) {
  EXPECT_EQ(*onnx_adapter::ExpandedNodeCount(Doubling(1)), 1);
  EXPECT_EQ(*onnx_adapter::ExpandedNodeCount(Doubling(4)), 8);
  EXPECT_EQ(*onnx_adapter::ExpandedNodeCount(Doubling(11, 3)), 59049);  // 3^10
  // 2^199 saturates, at once.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(*onnx_adapter::ExpandedNodeCount(Doubling(200)), INT64_MAX);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(FunctionCost, CyclesAndDeepChainsAreRefusedNotRecursedInto) {
  auto cycle = onnx_adapter::ExpandedNodeCount(Doubling(3, 1, 0));
  ASSERT_FALSE(cycle);
  EXPECT_NE(cycle.error().message().find("calls itself"), std::string::npos) << cycle.error().message();
  auto deep = onnx_adapter::ExpandedNodeCount(Doubling(100000, 1));
  ASSERT_FALSE(deep);
  EXPECT_NE(deep.error().message().find("levels deep"), std::string::npos) << deep.error().message();
  EXPECT_EQ(*onnx_adapter::ExpandedNodeCount(Doubling(onnx_adapter::kMaxFunctionDepth, 1)), 1);
}

TEST(FunctionCost, AModelExpandingPastTheLimitIsRefusedAtLoad) {
  TempDir dir;
  auto big = Model::Load(Save(Doubling(21), dir / "big.onnx"));  // 2^20 nodes once inlined
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(big.error().message().find("expand to 1048576 nodes, more than the limit"), std::string::npos)
      << big.error().message();
  EXPECT_TRUE(Model::Load(Save(Doubling(19), dir / "ok.onnx")));  // 2^18: loads
}

// The probes: 22 levels (`run` killed after 120 s) and 200 levels (`inspect`
// killed after 60 s) exit 2 at once through the binary.
TEST(FunctionCost, InspectCheckAndRunRefuseAnExponentialModelAtOnce) {
  TempDir dir;
  for (int levels : {22, 200}) {
    const fs::path model = Save(Doubling(levels), dir / "m.onnx");
    for (const std::string cmd : {"inspect", "check", "run"}) {
      const auto start = std::chrono::steady_clock::now();
      const std::string line = "timeout 60 " + std::string(PARITY_BINARY) + " " + cmd + " " + model.string() +
                               " > /dev/null 2> " + (dir / "err").string();
      const int status = std::system(line.c_str());
      ASSERT_TRUE(WIFEXITED(status));
      EXPECT_EQ(WEXITSTATUS(status), 2) << cmd << " on " << levels << " levels";
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << cmd;
    }
  }
}

}  // namespace
}  // namespace parity
