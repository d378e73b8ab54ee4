#include "engine/run/arithmetic.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace parity {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// SNR (dB) of a normwise relative error e.
double Snr(double e) { return -20 * std::log10(e); }

RunConfig OnOpenVino(std::string load_config = "") {
  RunConfig c;
  c.providers = {"openvino"};
  if (!load_config.empty()) c.provider_options["openvino"]["load_config"] = load_config;
  return c;
}

Environment Bf16Cpu() {
  Environment e;
  e.ep_devices.push_back({.ep_name = "OpenVINOExecutionProvider", .ep_vendor = "Intel", .device_type = "cpu",
                          .capabilities = "BF16 WINOGRAD FP32 FP16"});
  return e;
}

ArithmeticEvidence ErrorOf(double e) { return {.snr_db = Snr(e)}; }

// The SNR buckets of old named bf16 for a planted fp32 fault, int8 and
// saturation alike (issue 40): an error's size alone names nothing now.
TEST(Arithmetic, SizeAloneNamesNothing) {
  const RunConfig cpu;
  const Environment env;
  for (double e : {2e-3, 6e-5, 3e-7, 0.2}) EXPECT_FALSE(DiagnoseArithmetic(ErrorOf(e), cpu, env).has_value()) << e;
  EXPECT_FALSE(DiagnoseArithmetic({}, cpu, env).has_value());
}

TEST(Arithmetic, DerivedModelIsNamedByItsKind) {
  ArithmeticEvidence int8 = ErrorOf(2e-3);
  int8.derived = "int8";
  // Even on a config that would round: the model knows what it is.
  auto v = DiagnoseArithmetic(int8, OnOpenVino(), Bf16Cpu());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->arithmetic, "int8 quantization");
  EXPECT_EQ(v->unit_roundoff, 0);
  EXPECT_TRUE(v->fix.empty());
  EXPECT_THAT(ArithmeticLine(*v), Not(HasSubstr("bf16")));
  ArithmeticEvidence half = ErrorOf(2e-3);
  half.derived = "fp16";
  EXPECT_EQ(DiagnoseArithmetic(half, RunConfig{}, Environment{})->arithmetic, "fp16 model");
}

TEST(Arithmetic, EmulationNamesTheFormatOnlyWhereItReproducesTheErrors) {
  ArithmeticEvidence e = ErrorOf(2e-3);
  e.emulation = EmulationEvidence{.format = "bf16", .compared = 12, .reproduced = 11, .median_ratio = 1.2};
  auto v = DiagnoseArithmetic(e, OnOpenVino(R"({"CPU":{"INFERENCE_PRECISION_HINT":"f32"}})"), Environment{});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->arithmetic, "bf16");
  EXPECT_EQ(v->unit_roundoff, std::ldexp(1.0, -8));
  EXPECT_THAT(ArithmeticLine(*v), HasSubstr("consistent with bf16 arithmetic"));
  EXPECT_THAT(v->evidence, HasSubstr("11 of 12 tensors"));
  // Half the tensors reproduced: not evidence. A local fault is said instead.
  e.emulation->reproduced = 6;
  e.local_node = "/layer2/conv/Conv";
  v = DiagnoseArithmetic(e, OnOpenVino(), Environment{});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->arithmetic, "local fault");
  EXPECT_EQ(v->node, "/layer2/conv/Conv");
  EXPECT_THAT(ArithmeticLine(*v), HasSubstr("a local fault at node '/layer2/conv/Conv'"));
  // Two tensors are too few to tell a format.
  e.local_node.clear();
  e.emulation = EmulationEvidence{.format = "bf16", .compared = 2, .reproduced = 2, .median_ratio = 1};
  EXPECT_FALSE(DiagnoseArithmetic(e, OnOpenVino(), Environment{}).has_value());
}

// The demo's x1.02 fp32 weight on the CPU EP was called "consistent with
// bf16 arithmetic" because an emulation reproduced it (issue 50): the CPU
// EP never computes a float32 model in bf16, so nothing names it there.
TEST(Arithmetic, AFormatTheConfigCannotComputeInIsNeverNamed) {
  ArithmeticEvidence e = ErrorOf(2e-3);
  e.emulation = EmulationEvidence{.format = "bf16", .compared = 5, .reproduced = 5, .median_ratio = 1.1};
  const RunConfig cpu;
  EXPECT_FALSE(ConfigCanCompute("bf16", cpu));
  EXPECT_FALSE(ConfigCanCompute("fp16", cpu));
  EXPECT_FALSE(ConfigCanCompute("tf32", cpu));
  EXPECT_FALSE(DiagnoseArithmetic(e, cpu, Environment{}).has_value());
  e.local_node = "/layer2/conv/Conv";
  auto v = DiagnoseArithmetic(e, cpu, Environment{});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->arithmetic, "local fault");
  RunConfig cuda;
  cuda.providers = {"cuda", "cpu"};
  EXPECT_TRUE(ConfigCanCompute("tf32", cuda));
  EXPECT_FALSE(ConfigCanCompute("bf16", cuda));
  EXPECT_TRUE(ConfigCanCompute("bf16", OnOpenVino()));
  RunConfig arm = cpu;
  arm.session_entries["mlas.enable_gemm_fastmath_arm64_bfloat16"] = "1";
  EXPECT_TRUE(ConfigCanCompute("bf16", arm));
}

// A hand-edited float copy judged against its original: the error is the
// models' difference, whatever the config or an emulation would say.
TEST(Arithmetic, AModelDifferenceNamesNoArithmetic) {
  ArithmeticEvidence e = ErrorOf(2e-3);
  e.model_differs = true;
  e.local_node = "/layer2/conv/Conv";
  e.emulation = EmulationEvidence{.format = "bf16", .compared = 5, .reproduced = 5, .median_ratio = 1.1};
  EXPECT_FALSE(DiagnoseArithmetic(e, OnOpenVino(), Bf16Cpu()).has_value());
}

TEST(Arithmetic, OpenVinoOnABf16CpuNamesTheHintAndTheF32Option) {
  auto v = DiagnoseArithmetic(ErrorOf(2e-3), OnOpenVino(), Bf16Cpu());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->arithmetic, "bf16");
  EXPECT_THAT(v->cause, HasSubstr("INFERENCE_PRECISION_HINT=bf16"));
  EXPECT_THAT(v->fix, HasSubstr(R"(openvino:load_config={"CPU":{"INFERENCE_PRECISION_HINT":"f32"}})"));
  EXPECT_THAT(ArithmeticLine(*v), HasSubstr("consistent with bf16 arithmetic"));
  // With the f32 hint given, or on a CPU without BF16, nothing says bf16.
  EXPECT_FALSE(
      DiagnoseArithmetic(ErrorOf(2e-3), OnOpenVino(R"({"CPU":{"INFERENCE_PRECISION_HINT":"f32"}})"), Bf16Cpu()));
  EXPECT_FALSE(DiagnoseArithmetic(ErrorOf(2e-3), OnOpenVino(), Environment{}));
  // Nor for an error far past any rounding.
  EXPECT_FALSE(DiagnoseArithmetic(ErrorOf(0.3), OnOpenVino(), Bf16Cpu()));
}

TEST(Arithmetic, CudaNamesTf32UnlessItIsOff) {
  RunConfig cuda;
  cuda.providers = {"cuda"};
  auto v = DiagnoseArithmetic(ErrorOf(6e-5), cuda, Environment{});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->arithmetic, "tf32");
  EXPECT_THAT(v->fix, HasSubstr("cuda:use_tf32=0"));
  cuda.provider_options["cuda"]["use_tf32"] = "0";
  EXPECT_FALSE(DiagnoseArithmetic(ErrorOf(6e-5), cuda, Environment{}));
}

}  // namespace
}  // namespace parity
