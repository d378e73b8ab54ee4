// RunCheck takes its references as Reference values (engine/load/reference.h):
// a config or a model for ORT, a dump for PyTorch; any other kind is refused
// before anything is read.
#include <gtest/gtest.h>

#include "engine/check/check.h"

namespace parity {
namespace {

TEST(CheckOptions, ABaselineIsNotACheckReference) {
  CheckOptions o;
  o.model_path = "/nonexistent/model.onnx";
  o.reference = Reference{.kind = Reference::Kind::kBaseline, .path = "/nonexistent/baseline"};
  auto r = RunCheck(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("a baseline reference is not supported"), std::string::npos)
      << r.error().message();
}

TEST(CheckOptions, ThePyTorchReferenceMustBeADump) {
  CheckOptions o;
  o.model_path = "/nonexistent/model.onnx";
  o.torch = Reference{.kind = Reference::Kind::kModel, .path = "/nonexistent/other.onnx"};
  auto r = RunCheck(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("the PyTorch reference is a model, not a dump"), std::string::npos)
      << r.error().message();
}

TEST(CheckOptions, EveryFurtherPyTorchReferenceMustBeADump) {
  CheckOptions o;
  o.model_path = "/nonexistent/model.onnx";
  o.torch = Reference{.kind = Reference::Kind::kTorchDump, .path = "/nonexistent/dump"};
  o.more_torch.push_back(Reference{.kind = Reference::Kind::kConfig});
  auto r = RunCheck(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("a further PyTorch reference is a config, not a dump"), std::string::npos)
      << r.error().message();
}

}  // namespace
}  // namespace parity
