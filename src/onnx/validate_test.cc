#include "onnx/validate.h"

#include <gtest/gtest.h>

#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/inspect.h"

namespace parity {
namespace {

TEST(Check, ValidModelHasNoErrors) {
  for (const auto& f : Check(OpsetModel(17))) EXPECT_EQ(f.severity, Severity::kInfo) << f.message;
}

TEST(Check, Opset18SkipsTheCheckerAndSaysWhy) {
  Model m = OpsetModel(18);
  EXPECT_EQ(Inspect(m).default_opset(), 18);
  const auto findings = Check(m);
  ASSERT_FALSE(findings.empty());
  bool skipped = false;
  for (const auto& f : findings) {
    EXPECT_NE(f.severity, Severity::kError) << f.message;
    if (f.stage == "checker") {
      skipped = true;
      EXPECT_EQ(f.message,
                "checker skipped: model uses opset 18, newer than the bundled ONNX 1.12 knows (<= 17)");
    }
  }
  EXPECT_TRUE(skipped);
}

TEST(Check, NewerIrVersionSkipsTheCheckerAndSaysWhy) {
  const auto findings = Check(OpsetModel(19));  // IR version 9
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].stage, "checker");
  EXPECT_EQ(findings[0].message,
            "checker skipped: model has IR version 9, newer than the bundled ONNX 1.12 knows (<= 8)");
  for (const auto& f : findings) EXPECT_NE(f.severity, Severity::kError) << f.message;
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

}  // namespace
}  // namespace parity
