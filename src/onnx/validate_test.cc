#include "onnx/validate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/build_info.h"

#include "onnx/builder.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/inspect.h"
#include "onnx/model_internal.h"

namespace parity {
namespace {

TEST(Check, ValidModelHasNoErrors) {
  for (const auto& f : Check(OpsetModel(17))) EXPECT_EQ(f.severity, Severity::kInfo) << f.message;
}

TEST(Check, CurrentOpsetsAndIrVersionsAreChecked) {
  // What torch 2.x's exporters write: IR 9-10, opset 18-23. The checker runs.
  for (int opset : {18, 20, 21, 23}) {
    SCOPED_TRACE(opset);
    Model m = OpsetModel(opset);
    onnx_adapter::MutableProto(m).set_ir_version(10);
    EXPECT_EQ(Inspect(m).default_opset(), opset);
    for (const auto& f : Check(m)) {
      EXPECT_NE(f.severity, Severity::kError) << f.message;
      EXPECT_FALSE(f.message.starts_with("checker skipped")) << f.message;
    }
  }
  EXPECT_GE(CheckerMaxIrVersion(), 10);
  EXPECT_GE(CheckerMaxOpset(), 23);
}

TEST(Check, NewerIrVersionSkipsTheCheckerAndSaysWhy) {
  Model m = OpsetModel(18);
  const int64_t ir = CheckerMaxIrVersion() + 1;
  onnx_adapter::MutableProto(m).set_ir_version(ir);
  const auto findings = Check(m);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].stage, "checker");
  EXPECT_EQ(findings[0].message,
            fmt::format("checker skipped: model has IR version {}, newer than ONNX {} knows (<= {})", ir,
                        PARITY_ONNX_VERSION, ir - 1));
  for (const auto& f : findings) EXPECT_NE(f.severity, Severity::kError) << f.message;
}

TEST(Check, NewerOpsetSkipsTheCheckerAndSaysWhy) {
  Model m = OpsetModel(18);
  for (auto& o : *onnx_adapter::MutableProto(m).mutable_opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") o.set_version(CheckerMaxOpset() + 1);
  const auto findings = Check(m);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].message,
            fmt::format("checker skipped: model uses opset {}, newer than ONNX {} knows (<= {})",
                        CheckerMaxOpset() + 1, PARITY_ONNX_VERSION, CheckerMaxOpset()));
}

TEST(Check, CheckerRefusalFailsWithTheCheckersMessage) {
  auto broken = ReplaceNodeOp(OpsetModel(20), "/Relu", "NoSuchOp");
  ASSERT_TRUE(broken) << broken.error().message();
  const auto findings = Check(*broken);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].severity, Severity::kError);
  EXPECT_NE(findings[0].message.find("NoSuchOp"), std::string::npos) << findings[0].message;
}

// ORT's transformers optimizer writes its SimplifiedLayerNormalization in the
// default domain: one finding the runtime decides (check: ORT's session), and
// the checker still judges the rest of the graph.
TEST(Check, OpsOnnxDoesNotDefineAreOneFindingTheRuntimeDecides) {
  auto m = ReplaceNodeOp(OpsetModel(17), "/Relu", "SimplifiedLayerNormalization");
  ASSERT_TRUE(m) << m.error().message();
  int runtime = 0, other_errors = 0;
  for (const auto& f : Check(*m)) {
    if (f.runtime_decides) {
      ++runtime;
      EXPECT_EQ(f.severity, Severity::kError);
      EXPECT_NE(f.message.find("SimplifiedLayerNormalization"), std::string::npos) << f.message;
    } else {
      other_errors += f.severity == Severity::kError;
    }
  }
  EXPECT_EQ(runtime, 1);
  EXPECT_EQ(other_errors, 0);
  EXPECT_EQ(RuntimeOpNodes(*m), std::vector<std::string>{"/Relu"});
  EXPECT_TRUE(RuntimeOpNodes(OpsetModel(17)).empty());
}

TEST(Check, ReportsCheckerErrorsWithoutFailing) {
  // Relu replaced by an op that does not exist in the default domain.
  auto broken = ReplaceNodeOp(OpsetModel(17), "/Relu", "NoSuchOp");
  ASSERT_TRUE(broken) << broken.error().message();
  const auto findings = Check(*broken);
  bool checker_error = false;
  for (const auto& f : findings)
    if (f.stage == "checker" && f.severity == Severity::kError) {
      checker_error = true;
      EXPECT_NE(f.message.find("NoSuchOp"), std::string::npos) << f.message;
    }
  EXPECT_TRUE(checker_error);
}

TEST(Check, ShapeInferenceErrorsAreFindings) {
  // An int64 Conv bias next to float32 data: the checker passes, type inference does not.
  Model m = ConvBnRelu();
  Tensor bad(DType::kInt64, {16});
  auto broken = ReplaceInitializer(m, "conv.bias", bad);
  ASSERT_TRUE(broken) << broken.error().message();
  const auto findings = Check(*broken);
  bool found = false;
  for (const auto& f : findings)
    if (f.stage == "shape_inference") {
      found = true;
      EXPECT_EQ(f.severity, Severity::kError);
    }
  EXPECT_TRUE(found);
}

// A MatMul over a 1 MiB weight, then a Reshape whose target shape is a small
// constant (data shape inference must read) and whose output has no declared type.
Model LargeWeightThenReshape() {
  ModelBuilder b(17);
  const std::string x = b.Input("x", DType::kFloat32, {4, 512});
  const std::string y = b.MatMul(x, b.RandomWeight("w", {512, 512}, 0.02f));
  b.Output(b.Reshape(b.Relu(y), {2, 1024}), "out");
  auto m = b.Build();
  EXPECT_TRUE(m) << m.error().message();
  return std::move(*m);
}

TEST(InferredStructure, SameTypesAsWithInferredShapesWithoutTheWeightsBytes) {
  const Model m = LargeWeightThenReshape();
  auto full = WithInferredShapes(m);
  auto lean = InferredStructure(m);
  ASSERT_TRUE(full) << full.error().message();
  ASSERT_TRUE(lean) << lean.error().message();
  const auto& fg = onnx_adapter::Proto(*full).graph();
  const auto& lg = onnx_adapter::Proto(*lean).graph();
  ASSERT_GT(fg.value_info_size(), 0);
  ASSERT_EQ(lg.value_info_size(), fg.value_info_size());
  for (int i = 0; i < fg.value_info_size(); ++i)
    EXPECT_EQ(lg.value_info(i).SerializeAsString(), fg.value_info(i).SerializeAsString())
        << fg.value_info(i).name();
  ASSERT_EQ(lg.initializer_size(), fg.initializer_size());
  for (int i = 0; i < fg.initializer_size(); ++i) {
    const auto& f = fg.initializer(i);
    const auto& l = lg.initializer(i);
    EXPECT_EQ(l.name(), f.name());
    EXPECT_EQ(l.data_type(), f.data_type());
    EXPECT_EQ(std::vector<int64_t>(l.dims().begin(), l.dims().end()),
              std::vector<int64_t>(f.dims().begin(), f.dims().end()));
    if (f.raw_data().size() >= (size_t{1} << 20)) {
      EXPECT_TRUE(l.has_raw_data()) << l.name();  // one value field, as the checker wants
      EXPECT_TRUE(l.raw_data().empty()) << l.name();
    } else {
      EXPECT_EQ(l.raw_data(), f.raw_data()) << l.name();  // the Reshape's shape: read by inference
    }
  }
  // The model itself keeps its weights, and the checker passes on it.
  EXPECT_EQ(onnx_adapter::Proto(m).graph().initializer(0).raw_data().size(), size_t{512 * 512 * 4});
  for (const auto& f : Check(m)) EXPECT_NE(f.severity, Severity::kError) << f.message;
}

}  // namespace
}  // namespace parity
