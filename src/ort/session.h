// An ONNX Runtime inference session behind parity types: a model (file or
// bytes) and a RunConfig in, TensorSets in and out. Nothing ORT-specific
// escapes: every Ort::Exception becomes an Error here.
//
// Thread-safety: Create may be called concurrently. Run may be called
// concurrently on one Session (ORT's Run is thread-safe). EndProfiling and
// moving must not overlap a Run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ort/tensor_info.h"

namespace parity::ort {

// A model to load: a file path or serialized ModelProto bytes. Copies share
// the bytes.
class ModelSource {
 public:
  static ModelSource FromFile(std::string path);
  static ModelSource FromBytes(std::string bytes);
  // Bytes whose external tensors are read from `external_data_dir` (ORT's
  // "session.model_external_initializers_file_folder_path").
  static ModelSource FromBytes(std::string bytes, std::string external_data_dir);

  bool is_file() const { return bytes_ == nullptr; }
  const std::string& path() const { return path_; }  // empty for bytes
  std::string_view bytes() const;                    // empty for a file
  // Where the bytes' external data lies; empty: none (a file's is its folder).
  const std::string& external_data_dir() const { return external_dir_; }
  // The path, or "<in-memory model, N bytes>", for messages.
  std::string Describe() const;

 private:
  std::string path_;
  std::shared_ptr<const std::string> bytes_;
  std::string external_dir_;
};

// What a session needs beyond the RunConfig (which says how the model runs,
// not what parity observes about it).
struct SessionExtras {
  // Log the session creation at INFO severity under a private log id and keep
  // the lines: Session::optimizer_log(), Session::modified_optimizers().
  bool capture_optimizer_log = false;
  // Non-empty: ORT profiles the session and writes "<prefix>_<date>.json";
  // Session::EndProfiling returns the path.
  std::string profile_prefix;
  // False: ORT's CPU memory arena is off for this session, its tensors
  // allocated and freed one by one. For sessions run once or a few times
  // (the unfused reference, the sessions observing every tensor): the arena
  // grows in powers of two and keeps what it grew, which was a third more
  // than the model's need over four runs of gpt2_small at `disable` (issue 26).
  bool cpu_mem_arena = true;
  // Ask ORT which EP took which node (Session::ep_assignment) also for a
  // CPU-only config: two plans of one model are compared by it without
  // saving an optimized model (engine/run/observe.h). Other configs always
  // record it (RecordsAssignment).
  bool record_assignment = false;
};

// Whether every session of `config` records its node assignment (any
// provider but the CPU alone): the assignment reports list.
bool RecordsAssignment(const RunConfig& config);

// The nodes one EP took, from ORT's own assignment
// (Session_GetEpGraphAssignmentInfo): a compiling EP (OpenVINO) reports one
// entry per compiled subgraph, a kernel EP (CPU) one entry per node.
struct EpAssignment {
  std::string ep;                     // "OpenVINOExecutionProvider", "CPUExecutionProvider"
  std::vector<std::string> nodes;     // node names, in ORT's order
  std::vector<std::string> op_types;  // beside `nodes`
};

// The ORT sessions alive in this process now, and the most alive at once
// since the last ResetPeakLiveSessions() (each holds its own copy of the
// weights: parity's commands keep one alive at a time, issue 26; tests check
// it). Thread-safe.
int LiveSessions();
int PeakLiveSessions();
void ResetPeakLiveSessions();
// Sessions created in this process so far (each a load of the model and its
// weights: what a command's time on a large model is mostly made of).
int SessionsCreated();

// Makes ORT ready on a thread of its own while the command reads its model:
// the library loaded, its environment made (~15 ms) and the plugin EP
// libraries registered (OpenVINO's: ~12 ms and 11 MiB where the venv has
// it), so that neither the first session nor the report's list of EP devices
// waits for them. The first object starts it (later ones do nothing) and
// waits for it when destroyed; Session::Create waits for it too, so ORT never
// registers a library while a session is made. Failures are not kept: they
// are met again, and reported, where ORT or the library is needed.
class WarmUpInBackground {
 public:
  WarmUpInBackground();
  ~WarmUpInBackground();
  WarmUpInBackground(const WarmUpInBackground&) = delete;
  WarmUpInBackground& operator=(const WarmUpInBackground&) = delete;

 private:
  bool started_ = false;
};

// How Session::Run hands back the outputs.
enum class OutputBuffers {
  // Copied into parity Tensors; ORT's buffers are released at once.
  kCopied,
  // Left in ORT's buffers, which the Tensors wrap (no copy): each Tensor
  // keeps its ORT value, and the session's ORT objects with it, until the
  // last copy of it is destroyed. For tensors consumed and dropped at once
  // (a trace writing each to a file): one held past its use holds the
  // session's memory too.
  kBorrowed,
};

// Whether ORT can make sessions under `config` at all, before any model is
// read: every provider is available and its libraries load (the TensorRT EP
// without libnvinfer, the CUDA EP without CUDA's libraries), its options and
// the session config entries are accepted. A config that fails here is a
// setup mistake, not a verdict on a model: kUnsupported (a provider that
// cannot be loaded) or kInvalidArgument (a bad option), with ORT's reason.
Status CheckConfig(const RunConfig& config);

// In the message of a run Session::Run stopped at its time limit.
inline constexpr std::string_view kRunTimedOut = "ran past its time limit of";
// Whether `e` is such a run's error (context added to it included).
bool IsRunTimeout(const Error& e);

class Session {
 public:
  // Loads the model under `config`. Errors keep ORT's message (callers add the
  // model path as context):
  //   kInvalidArgument  malformed/invalid model, or a bad config (unknown
  //                     provider name, bad session config entry)
  //   kNotFound         the model file does not exist
  //   kUnsupported      a provider this ORT build lacks (the message lists the
  //                     available ones), or an operator ORT does not implement
  //   kRuntime          anything else ORT reports
  // config.disabled_optimizers is merged with any
  // "optimization.disable_specified_optimizers" entry in session_entries
  // (names separated by ',' or ';'); ORT receives them ';'-separated, the
  // separator ORT 1.29 really parses. ORT ignores unknown names silently.
  static Result<Session> Create(const ModelSource& model, const RunConfig& config,
                                const SessionExtras& extras = {});

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  // The model's inputs (without initializers) and outputs, in model order.
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // Which EP took which nodes; recorded only when the config names a
  // provider other than CPU (empty otherwise, or when this ORT cannot say).
  const std::vector<EpAssignment>& ep_assignment() const;

  // Wall time of ORT's session construction (load + optimize + prepare), ms.
  double creation_ms() const;
  // The most bytes the session's CUDA memory arena has held at once since the
  // session was created (ORT's allocator statistics, "MaxInUse"): the GPU
  // memory its weights and activations took. nullopt for a session with no
  // CUDA allocator (the CPU EP, plugin EPs) or an ORT whose arena keeps no
  // statistics. cuDNN/cuBLAS workspaces outside the arena are not counted.
  std::optional<int64_t> CudaPeakBytes() const;

  // The ORT log lines of this session's creation; empty unless
  // SessionExtras::capture_optimizer_log.
  const std::vector<std::string>& optimizer_log() const;
  // Optimizers that changed the graph ("ConvActivationFusion", ...), each
  // once in order of first change; empty unless capture_optimizer_log.
  const std::vector<std::string>& modified_optimizers() const;

  // Runs the model. `inputs` must name every model input with its dtype, rank
  // and fixed dimensions, else kInvalidArgument listing every problem (nothing
  // runs). `output_names` selects outputs (empty: all, in model order); an
  // unknown name is kInvalidArgument. Returns the outputs, in the requested
  // order, copied into parity Tensors unless `buffers` says otherwise. ORT
  // failures during the run are kRuntime (kInvalidArgument when ORT says the
  // arguments are invalid). `timeout_s` > 0: a watchdog thread stops a run
  // still going after that many seconds (ORT's RunOptions terminate flag,
  // seen between two kernels, Loop bodies' included) and the run is a
  // kRuntime error whose message holds kRunTimedOut (IsRunTimeout); 0: the
  // limits of the scope in force (ort/run_limits.h: time and memory), none
  // outside every scope.
  Result<TensorSet> Run(const TensorSet& inputs, const std::vector<std::string>& output_names = {},
                        OutputBuffers buffers = OutputBuffers::kCopied, double timeout_s = 0) const;

  // The "plain ORT loop" of bench/latency_bench.cc: converts `inputs` to
  // Ort::Values once (no copy), then times `runs` calls of Ort::Session::Run
  // alone (steady_clock around each call; outputs released untimed). Returns
  // each run's ms. No warm-up. Same input checks as Run. Defined in
  // raw_timing.cc.
  Result<std::vector<double>> TimeRawRuns(const TensorSet& inputs, int runs) const;

  // Stops profiling and returns the JSON profile's path. kInvalidArgument when
  // the session was not created with SessionExtras::profile_prefix or the
  // profile was already ended.
  Result<std::string> EndProfiling();

 private:
  struct Impl;
  explicit Session(std::shared_ptr<Impl> impl);
  // Shared with the Tensors of a kBorrowed run (they keep the session alive).
  std::shared_ptr<Impl> impl_;
};

}  // namespace parity::ort
