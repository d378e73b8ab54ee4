// Why a target departs, not only where: the arithmetic its error comes from,
// named only from evidence (issue 40), and, for the EPs whose defaults
// parity knows, the default that chose it and the option that runs float32
// (docs/providers.md).
//
// The size of an error is the normwise relative error e = ||target - ref||_2
// / ||ref||_2 (from the comparison's SNR: e = 10^(-snr_db/20)). Its size
// alone names nothing: a planted weight fault, an int8 model and bf16
// arithmetic can give the same e. A format is named when
//   - the target is a derived model, which knows what it is ("int8
//     quantization", "fp16 model"), never a rounding of the config;
//   - the config says so: OpenVINO on a CPU whose EP device lists BF16
//     without an f32 INFERENCE_PRECISION_HINT in load_config (bf16); the
//     CUDA EP without use_tf32=0 (tf32);
//   - the reference re-run with that rounding emulated reproduces the
//     target's per-tensor errors across many tensors (EmulationEvidence,
//     engine/locate/arithmetic_evidence.cc);
// else an error that starts at one node, with every tensor before it at
// float32's own level, is a local fault of that node; else nothing is said.
// Pure functions over parity's own types; thread-safe.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "core/run_config.h"
#include "engine/run/environment.h"

namespace parity {

// How well the reference re-run with a format's rounding emulated (every
// float tensor rounded to it) reproduces the target's error, tensor by tensor.
struct EmulationEvidence {
  std::string format;    // "bf16", "fp16"
  int compared = 0;      // tensors with an error in both runs
  int reproduced = 0;    // of those, the ones whose errors are within a factor of 8 of each other
  double median_ratio = 0;  // of target error / emulated error over `compared`
  // Whether this reproduces the target's errors: on at least 3 tensors and
  // at least three quarters of those compared.
  bool Reproduces() const { return compared >= 3 && reproduced * 4 >= compared * 3; }
};

// What is known about a target's error.
struct ArithmeticEvidence {
  double snr_db = std::numeric_limits<double>::infinity();  // of the error judged
  std::string derived;  // "int8" or "fp16": the target is a derived model of that kind; empty otherwise
  // The node the error starts at when every tensor before it is at float32's
  // level (a local fault); empty when the error is spread or unknown.
  std::string local_node;
  std::string local_fused_node;  // the fused node computing it, when ORT fused it with others
  std::optional<EmulationEvidence> emulation;  // the best-reproducing format, when emulation ran
  // The target is another float model than the reference (a hand-edited
  // copy, --target-model / --reference-model, neither int8 nor fp16): its
  // error is the models' difference, never a rounding of the config.
  bool model_differs = false;
};

struct ArithmeticVerdict {
  // "bf16", "fp16", "tf32" (a rounding, named from evidence), "int8
  // quantization", "fp16 model" (a derived model), "local fault" (at `node`).
  std::string arithmetic;
  double relative_error = 0;  // e above
  double unit_roundoff = 0;   // of a named rounding format; 0 otherwise
  std::string evidence;  // what named it: the config, the emulation, the derived model, the node
  std::string node;      // the local fault's node
  std::string cause;  // the EP default that explains it, e.g. OpenVINO's bf16 hint; empty when none is known
  std::string fix;    // the exact option that runs f32; empty when none is known
};

// Whether the target's config can compute in `format` ("bf16", "fp16",
// "tf32") on a float32 model: the CPU EP never does (it computes float32
// for float32 tensors; only its arm64 bf16 fast-math session option
// reduces a MatMul), the CUDA EP only TF32 (its default), other EPs
// (OpenVINO, TensorRT, DirectML, ...) may. An emulation that reproduces a
// format names it only where the config can compute in it.
bool ConfigCanCompute(std::string_view format, const RunConfig& target);

// The verdict for a target's error (`evidence.snr_db` +inf or NaN: identical
// or not comparable, nullopt), or nullopt when nothing names it. `target` and
// `env` give the config's evidence (see above).
std::optional<ArithmeticVerdict> DiagnoseArithmetic(const ArithmeticEvidence& evidence, const RunConfig& target,
                                                    const Environment& env);

// One line: "errors consistent with bf16 arithmetic (normwise relative error
// 3.1e-03; bf16 unit roundoff 2^-8 = 3.9e-03): <evidence>: likely cause:
// <cause>; <fix>", or "a local fault at node 'X' ...", or "int8 quantization
// ...".
std::string ArithmeticLine(const ArithmeticVerdict& v);

}  // namespace parity
