#include "engine/run/arithmetic.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace parity {
namespace {

using ::testing::HasSubstr;

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

TEST(Arithmetic, ClassesFollowTheUnitRoundoffs) {
  const RunConfig cpu;
  const Environment env;
  EXPECT_EQ(DiagnoseArithmetic(Snr(2e-3), cpu, env)->arithmetic, "bf16");
  EXPECT_EQ(DiagnoseArithmetic(Snr(2e-3), cpu, env)->unit_roundoff, std::ldexp(1.0, -8));
  EXPECT_EQ(DiagnoseArithmetic(Snr(6e-5), cpu, env)->arithmetic, "fp16/tf32");
  EXPECT_EQ(DiagnoseArithmetic(Snr(3e-7), cpu, env)->arithmetic, "fp32");
  EXPECT_EQ(DiagnoseArithmetic(Snr(0.2), cpu, env)->arithmetic, "worse than bf16");
  EXPECT_FALSE(DiagnoseArithmetic(std::numeric_limits<double>::infinity(), cpu, env).has_value());
}

TEST(Arithmetic, OpenVinoOnABf16CpuNamesTheHintAndTheF32Option) {
  auto v = DiagnoseArithmetic(Snr(2e-3), OnOpenVino(), Bf16Cpu());
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->cause, HasSubstr("INFERENCE_PRECISION_HINT=bf16"));
  EXPECT_THAT(v->fix, HasSubstr(R"(openvino:load_config={"CPU":{"INFERENCE_PRECISION_HINT":"f32"}})"));
  EXPECT_THAT(ArithmeticLine(*v), HasSubstr("consistent with bf16 arithmetic"));
  // With the f32 hint given, or on a CPU without BF16, the hint is not the cause.
  EXPECT_TRUE(DiagnoseArithmetic(Snr(2e-3), OnOpenVino(R"({"CPU":{"INFERENCE_PRECISION_HINT":"f32"}})"), Bf16Cpu())
                  ->cause.empty());
  EXPECT_TRUE(DiagnoseArithmetic(Snr(2e-3), OnOpenVino(), Environment{})->cause.empty());
}

TEST(Arithmetic, CudaNamesTf32UnlessItIsOff) {
  RunConfig cuda;
  cuda.providers = {"cuda"};
  EXPECT_THAT(DiagnoseArithmetic(Snr(6e-5), cuda, Environment{})->fix, HasSubstr("cuda:use_tf32=0"));
  cuda.provider_options["cuda"]["use_tf32"] = "0";
  EXPECT_TRUE(DiagnoseArithmetic(Snr(6e-5), cuda, Environment{})->cause.empty());
}

}  // namespace
}  // namespace parity
