// A Runner gives the values of named tensors of a model for a sample
// (Polygraphy's runner, docs/architecture.md "Runners"): every source of
// values parity judges with is one.
//
//   MakeOrtRunner     ONNX Runtime under a config: in this process when the
//                     config's runtime library is the process's, else in a
//                     child `parity runner-worker` that loads the other
//                     library (one ORT per process: ort/ort_library.h);
//   MakeStoredRunner  values already computed: a PyTorch dump, a baseline,
//                     stored outputs (names it lacks are kNotFound).
//
// Each says what ran as a typed fact (RanWhat), never as a string.
// Thread-compatible: one caller at a time per runner.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/runner/ort_fact.h"
#include "engine/runner/session_run.h"
#include "onnx/model.h"
#include "ort/session.h"

namespace parity {

// What a runner is: the one fact every report carries about a source of values.
struct RanWhat {
  enum class Kind { kOrtSession, kOrtChild, kTorchDump, kStored };
  Kind kind = Kind::kOrtSession;
  OrtFact ort;                   // kOrt*: which ONNX Runtime (version, file, how chosen)
  RunConfig config;              // kOrt*: the config (providers, opt level, optimizers off)
  std::filesystem::path source;  // kTorchDump, kStored: the folder or file the values come from

  bool is_ort() const { return kind == Kind::kOrtSession || kind == Kind::kOrtChild; }
};

// "ort", "ort_child", "torch", "stored" (a report's `runner.kind`).
std::string_view RanKindName(RanWhat::Kind kind);

// One request: a model file, and which of its tensors to return.
struct RunnerJob {
  std::filesystem::path model;     // an .onnx file (node names written: fusion maps read them)
  // A model in memory instead of `model` (which then only names it in
  // errors): run as it is, not copied; a child runner writes it to its
  // scratch folder once. The caller keeps it alive, unchanged, while the
  // runner runs it (a runner knows it by its address).
  const Model* loaded = nullptr;
  std::vector<std::string> names;  // tensors to return; empty: the model's outputs
  // ORT runners: non-empty asks ORT to save its optimized model of `model`
  // here, its weights as plan_weights says (by default structure only, the
  // weights to /dev/null); the outputs are then the untouched model's (names
  // must be empty: exposing tensors may re-plan). A plan job may keep its
  // session too (optimized_plan.h: the deployed session and its plan).
  std::filesystem::path save_plan;
  PlanWeights plan_weights = PlanWeights::kDropped;
  // Keep the session for the next job of the same model and names (check's
  // reference pass runs every sample on one session); any other job, or one
  // without it, releases it first: one session alive at a time.
  bool keep_session = false;
  // > 0: a run still going after this many seconds is stopped, a kRuntime
  // error (ort::IsRunTimeout); 0: the limits of the scope in force
  // (ort/run_limits.h). A child's run obeys both as the process's would.
  double timeout_s = 0;
  // kBorrowed: the values are ORT's own buffers, each holding its session
  // until dropped (ort::OutputBuffers; for values used once, a trace's). A
  // child's values are copies whatever this says: they cross a process.
  ort::OutputBuffers buffers = ort::OutputBuffers::kCopied;
  // The sample the inputs are; non-empty: a run's errors name it
  // ("<model>, sample '<sample>'").
  std::string sample;
  // ORT's CPU memory arena: off by default (a session run once or a few
  // times; the arena keeps what it grew, issue 26); on for a kept session
  // run many times and timed (locate's latency, ablation.h).
  bool cpu_mem_arena = false;
  // ORT's own input instead of `model` / `loaded` (which then only name it
  // in errors): a file or bytes parsed as they are (session_run.h
  // ExposedSource: a model with its tensors exposed, serialized once and
  // shared by the sessions that observe them); `names` must be its outputs,
  // and it saves no plan. The caller keeps it alive, unchanged, while the
  // runner runs it (known by its address). In process only: a child runner
  // refuses such a job (kInvalidArgument), as it runs model files.
  const ort::ModelSource* source = nullptr;
  // In process: ORT says which EP took which node even for the CPU alone
  // (ort::SessionExtras::record_assignment), read through kept_session()
  // (observe.h compares two plans by it). A child's runs record nothing more.
  bool record_assignment = false;
  // In process: ORT's log of the session's creation kept
  // (ort::SessionExtras::capture_optimizer_log), read through kept_session()
  // (modified_optimizers: bench --fusions). A child runner keeps none.
  bool capture_optimizer_log = false;
};

class Runner {
 public:
  virtual ~Runner() = default;
  virtual const RanWhat& ran() const = 0;
  // The values of job.names (or the outputs) for `inputs`, in the order asked.
  // Errors: the model or inputs refused, a runtime failure, a name the source
  // lacks (kNotFound), a child that died (kRuntime, with its last words).
  virtual Result<TensorSet> Run(const RunnerJob& job, const TensorSet& inputs) = 0;
  // Makes ready what a later Run of `job` needs (a kept session: its model
  // refused, or a provider ORT lacks, is this call's error, before any
  // sample runs). The default: nothing to prepare.
  virtual Status Prepare(const RunnerJob& job) { return {}; }
  // The session this runner keeps (RunnerJob::keep_session, after Prepare or
  // a Run) when it lives in this process: what a caller reads of it besides
  // values (its creation time, inputs, outputs, EP assignment) or times it
  // on (check's runtime stage). Null when none is kept, or in a child or a
  // store. Valid until the runner's next job that is not the kept one.
  virtual const ort::Session* kept_session() const { return nullptr; }
};

// In the error of every run of a child runner whose process died (during
// that run or before it): the runtime is gone, nothing more runs there.
inline constexpr std::string_view kRunnerDied = "in a child process died";
inline bool IsRunnerDied(const Error& e) { return e.message().find(kRunnerDied) != std::string::npos; }

// ORT under `config` on config.ort_library (empty: the process's). A child
// is started at once and says which ORT it loaded; a library it cannot load
// is kInvalidArgument with the child's one line. `binary`: the parity
// executable a child runs (empty: PARITY_BINARY, else this process's own).
Result<std::unique_ptr<Runner>> MakeOrtRunner(const RunConfig& config, const std::string& binary = "");

// The in-process one, always (what a child runs too).
std::unique_ptr<Runner> MakeSessionRunner(const RunConfig& config);

// Values already computed; `what` says where from (kind kTorchDump or kStored).
std::unique_ptr<Runner> MakeStoredRunner(TensorSet values, RanWhat what);

}  // namespace parity
