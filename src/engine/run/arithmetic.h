// Why a target departs, not only where: the arithmetic its error pattern is
// consistent with, and, for the EPs whose defaults parity knows, the default
// that chose it and the option that runs float32 (docs/providers.md).
//
// The error pattern is the normwise relative error e = ||target - ref||_2 /
// ||ref||_2 (from the comparison's SNR: e = 10^(-snr_db/20)). One rounding to
// a format of unit roundoff u gives e of roughly u/3 per rounded operand, and
// a few roundings on the way add up to about u: so e in [2^-13, 2^-5) is
// called bf16 (u = 2^-8), e in [2^-17, 2^-13) fp16 or tf32 (u = 2^-11), e
// below 2^-17 fp32 (u = 2^-24, reordered accumulation), and e of 2^-5 or more
// "worse than bf16" (a different computation, not a rounding).
// Pure functions over parity's own types; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "core/run_config.h"
#include "engine/run/environment.h"

namespace parity {

struct ArithmeticVerdict {
  std::string arithmetic;   // "bf16", "fp16/tf32", "fp32", "worse than bf16"
  double relative_error = 0;  // e above
  double unit_roundoff = 0;   // of `arithmetic` (0 for "worse than bf16")
  std::string cause;  // the EP default that explains it, e.g. OpenVINO's bf16 hint; empty when none is known
  std::string fix;    // the exact option that runs f32; empty when none is known
};

// The verdict for a target tensor compared with its reference (snr_db of the
// comparison; +inf or NaN: identical or not comparable, nullopt). `target` and
// `env` name the cause: OpenVINO on a CPU whose EP device lists BF16 without
// an f32 INFERENCE_PRECISION_HINT in load_config; CUDA without use_tf32=0.
std::optional<ArithmeticVerdict> DiagnoseArithmetic(double snr_db, const RunConfig& target, const Environment& env);

// One line: "errors consistent with bf16 arithmetic (normwise relative error
// 3.1e-03, bf16 unit roundoff 2^-8 = 3.9e-03): <cause>; <fix>".
std::string ArithmeticLine(const ArithmeticVerdict& v);

}  // namespace parity
