// `parity check`: the whole validation of an exported model in one call, in
// the stages of docs/contract.md — syntax, signature, numerics, runtime, robustness —
// on typical, boundary and anomalous samples, ending in a CheckReport (plain
// data; src/report/ renders it).
//
// Every ORT error is caught per sample and reported; the run goes on. The
// function fails (returns an error) only for bad input that makes checking
// meaningless: the model file cannot be read, the inputs file or the PyTorch
// dump cannot be read, an option is invalid.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "engine/check/check_result.h"
#include "engine/runner/cache_form.h"
#include "engine/inputs/sample_gen.h"
#include "engine/load/reference.h"

namespace parity {

// Above this many top-level nodes a passing check leaves `layer_curve` empty
// (with a note) instead of tracing every tensor (docs/security.md "Limits");
// so it does when the curve is over CheckOptions::curve_seconds.
inline constexpr int64_t kMaxCurveNodes = 10'000;

// The default per-sample time limit (CheckOptions::sample_timeout_s).
inline constexpr double kTimeoutFactor = 50;
inline constexpr double kMinDefaultTimeout = 10;
inline constexpr double kFirstRunTimeout = 600;

struct CheckOptions {
  std::string model_path;
  // What MODEL's numerics are judged against in ONNX Runtime (reference.h):
  // kConfig, MODEL itself under `reference.config` (default: disable), or
  // kModel, a model MODEL derives from (simplified, fp16, quantized, patched)
  // that shares its tensor names, run under `reference.config` instead of
  // MODEL. Other kinds are refused (kInvalidArgument).
  Reference reference;
  // A PyTorch dump (kTorchDump) MODEL was exported from: its outputs and
  // layers are judged against PyTorch too. Absent: PyTorch is not consulted.
  std::optional<Reference> torch;
  bool allow_symlinks = false;  // follow symlinks inside the PyTorch dump (torch_dump.h)
  // More dumps of the same model (--torch given again: other sizes, other
  // seeds): every sample of each is judged by its outputs; layers are
  // compared on `torch`'s traced sample only. Needs `torch`; each is a
  // kTorchDump (else kInvalidArgument).
  std::vector<Reference> more_torch;
  // The encoder of an encoder-decoder whose decode step is MODEL (the
  // generation stage runs it first; docs/generation.md). Empty: none.
  std::string encoder_path;
  // How the generation stage serves the step's caches (cache_form.h;
  // docs/generation.md "Deployed cache forms").
  CacheForm cache_form = CacheForm::kAuto;
  std::string inputs_path;  // user samples; empty: generated from the signature
  uint32_t seed = 0;        // for generated samples
  // How samples are generated (--shape, --dim, --range, --role, --min-size);
  // its seed is `seed`; with a dump, its traced sizes are the relations'
  // witnesses (traced_dims).
  SampleGenOptions generate;
  RunConfig target;         // the deployed config (all)
  TolerancePolicy policy;
  // The time limit of each ORT run of a sample, in seconds (docs/inputs.md
  // "Bounded runs"): a run past it is stopped and its sample reported as
  // TIMEOUT, never PASS. 0: no limit. Negative: the default, max(10 s,
  // kTimeoutFactor x the first ordinary sample's run on the reference), that
  // first run itself bounded by kFirstRunTimeout.
  double sample_timeout_s = -1;
  // The memory limit of each ORT run of a sample, in bytes: a run that grows
  // the process's resident memory by more is stopped and its sample reported
  // OVER MEMORY, never PASS, and the check goes on (ort/run_limits.h). 0: no
  // limit. Negative: the default, half of the memory this process may use.
  int64_t sample_memory_bytes = -1;
  int latency_runs = 20;    // at most, within latency_seconds
  int latency_warmup = 3;   // at most, within latency_seconds
  // Duration mode (onnxruntime_perf_test -t): the warm-up and timed runs of a
  // config fit in this many seconds, judged by the run before them; at least
  // one run is timed (determinism's second). A 6 s run is timed once, not 20 times.
  double latency_seconds = 2.0;
  // The reference config is timed as the target (--time-reference); by
  // default a reference whose latency_runs do not fit latency_seconds is
  // timed by determinism's re-run alone (one run): what is deployed is the
  // target, and a 4 GB model's run is 0.28 s.
  bool time_reference = false;
  // A passing check's per-layer curve costs sessions of its own (the
  // target's saved plan and two observed ones; two in all with a PyTorch
  // dump) and a run each: it is computed when that is estimated, from the
  // reference's measured session creation and run, at most this many
  // seconds; 0: never. A failing check localizes whatever it costs. A
  // 268M-parameter model's curve was half its check (docs/bench.md).
  double curve_seconds = 1.0;
  bool locate_on_failure = true;
  // Warnings (true findings that do not change the numbers: declared shapes
  // that contradict what the model computes) fail the check (--strict).
  bool strict = false;
  // Bytes of the reference's outputs kept in memory while the reference's
  // session runs every sample before the target's exists; further samples'
  // outputs go to a scratch folder and are read back when judged.
  size_t reference_outputs_in_memory = size_t{256} << 20;
  // Progress: (stage, done, total); may be empty.
  std::function<void(const std::string&, int, int)> progress;
};

Result<CheckReport> RunCheck(const CheckOptions& options);

}  // namespace parity
