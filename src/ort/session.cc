#include "ort/session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>

#include "core/atomic_file.h"
#include "ort/ep_libraries.h"
#include "ort/optimizer_log.h"
#include "ort/ort_env.h"
#include "ort/ort_error.h"
#include "ort/ort_library.h"
#include "ort/ort_providers.h"
#include "ort/session_impl.h"
#include "ort/value_conversion.h"

namespace parity::ort {

bool RecordsAssignment(const RunConfig& config) { return config.providers != std::vector<std::string>{"cpu"}; }

namespace {

constexpr char kDisableOptimizersKey[] = "optimization.disable_specified_optimizers";

GraphOptimizationLevel ToOrtLevel(OptLevel level) {
  switch (level) {
    case OptLevel::kDisable:
      return ORT_DISABLE_ALL;
    case OptLevel::kBasic:
      return ORT_ENABLE_BASIC;
    case OptLevel::kExtended:
      return ORT_ENABLE_EXTENDED;
    case OptLevel::kAll:
      return ORT_ENABLE_ALL;
  }
  return ORT_DISABLE_ALL;
}

// Splits a user's list of optimizer names on ',' or ';' (either may be
// written), trimming blanks, and appends the names to `out`.
void AppendOptimizerNames(std::string_view list, std::vector<std::string>& out) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of(",;", start);
    if (end == std::string_view::npos) end = list.size();
    std::string_view name = list.substr(start, end - start);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.front()))) name.remove_prefix(1);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.remove_suffix(1);
    if (!name.empty()) out.emplace_back(name);
    start = end + 1;
  }
}

constexpr char kRecordAssignmentKey[] = "session.record_ep_graph_assignment_info";

// Whether a session of `config` with `extras` records its node assignment.
bool Records(const RunConfig& config, const SessionExtras& extras) {
  return RecordsAssignment(config) || extras.record_assignment;
}

// Which EP took which node; empty when ORT cannot say (an older ORT).
std::vector<EpAssignment> ReadAssignment(const Ort::Session& session) {
  std::vector<EpAssignment> out;
  try {
    for (const Ort::ConstEpAssignedSubgraph& sub : session.GetEpGraphAssignmentInfo()) {
      EpAssignment a{.ep = sub.GetEpName()};
      for (const Ort::ConstEpAssignedNode& node : sub.GetNodes()) {
        a.nodes.push_back(node.GetName());
        a.op_types.push_back(node.GetOperatorType());
      }
      out.push_back(std::move(a));
    }
  } catch (const Ort::Exception&) {
    return {};
  }
  return out;
}

// Fills `options` from the config. May throw Ort::Exception (for example a
// session config entry ORT rejects).
Status Configure(const RunConfig& config, const SessionExtras& extras, Ort::SessionOptions& options) {
  options.SetGraphOptimizationLevel(ToOrtLevel(config.opt_level));
  if (config.intra_op_threads > 0) options.SetIntraOpNumThreads(config.intra_op_threads);
  if (config.inter_op_threads > 0) options.SetInterOpNumThreads(config.inter_op_threads);
  options.SetExecutionMode(config.parallel_execution ? ORT_PARALLEL : ORT_SEQUENTIAL);

  std::vector<std::string> disabled;
  for (const auto& [key, value] : config.session_entries) {
    if (key == kDisableOptimizersKey) {
      AppendOptimizerNames(value, disabled);
    } else {
      options.AddConfigEntry(key.c_str(), value.c_str());
    }
  }
  for (const std::string& name : config.disabled_optimizers) AppendOptimizerNames(name, disabled);
  if (!disabled.empty()) {
    // ORT 1.29 splits this value on ';' only, although its header documents a
    // comma-separated list: "A,B" silently disables nothing
    // (microsoft/onnxruntime#32211). Always hand it ';'.
    const std::string joined = fmt::format("{}", fmt::join(disabled, ";"));
    options.AddConfigEntry(kDisableOptimizersKey, joined.c_str());
  }
  if (!extras.profile_prefix.empty()) options.EnableProfiling(extras.profile_prefix.c_str());
  if (Records(config, extras)) options.AddConfigEntry(kRecordAssignmentKey, "1");
  return AppendProviders(options, config);
}

TensorInfo ReadInfo(const std::string& name, const Ort::TypeInfo& type) {
  TensorInfo info;
  info.name = name;
  if (type.GetONNXType() != ONNX_TYPE_TENSOR) {
    info.is_tensor = false;
    return info;
  }
  const auto tensor = type.GetTensorTypeAndShapeInfo();
  info.onnx_type = static_cast<int>(tensor.GetElementType());
  info.dtype = FromOrtElementType(tensor.GetElementType());
  // ORT reports an unknown shape as rank 0; only HasShape tells it from a scalar.
  info.rank_known = tensor.HasShape();
  info.shape = tensor.GetShape();
  for (const char* symbol : tensor.GetSymbolicDimensions()) info.dim_names.emplace_back(symbol ? symbol : "");
  info.dim_names.resize(info.shape.size());
  for (size_t d = 0; d < info.shape.size(); ++d) {
    if (info.shape[d] >= 0) info.dim_names[d].clear();  // a fixed dim has no symbol
  }
  return info;
}

}  // namespace

ModelSource ModelSource::FromFile(std::string path) {
  ModelSource m;
  m.path_ = std::move(path);
  return m;
}

ModelSource ModelSource::FromBytes(std::string bytes) {
  ModelSource m;
  m.bytes_ = std::make_shared<const std::string>(std::move(bytes));
  return m;
}

ModelSource ModelSource::FromBytes(std::string bytes, std::string external_data_dir) {
  ModelSource m = FromBytes(std::move(bytes));
  m.external_dir_ = std::move(external_data_dir);
  return m;
}

std::string_view ModelSource::bytes() const {
  return bytes_ ? std::string_view(*bytes_) : std::string_view();
}

std::string ModelSource::Describe() const {
  return is_file() ? path_ : fmt::format("<in-memory model, {} bytes>", bytes_->size());
}

namespace {
std::atomic<int> live_sessions{0};
std::atomic<int> peak_live_sessions{0};
std::atomic<int> sessions_created{0};
}  // namespace

LiveSessionToken::LiveSessionToken() {
  sessions_created.fetch_add(1);
  const int now = live_sessions.fetch_add(1) + 1;
  int peak = peak_live_sessions.load();
  while (now > peak && !peak_live_sessions.compare_exchange_weak(peak, now)) {
  }
}
LiveSessionToken::~LiveSessionToken() { live_sessions.fetch_sub(1); }

int LiveSessions() { return live_sessions.load(); }
int PeakLiveSessions() { return peak_live_sessions.load(); }
void ResetPeakLiveSessions() { peak_live_sessions.store(live_sessions.load()); }
int SessionsCreated() { return sessions_created.load(); }

namespace {

struct WarmUpState {
  std::mutex mutex;
  std::shared_future<void> done;  // once started
};
WarmUpState& WarmUp() {
  static auto* state = new WarmUpState();  // leaked like the Ort::Env it makes
  return *state;
}

void AwaitWarmUp() {
  std::shared_future<void> done;
  {
    std::lock_guard lock(WarmUp().mutex);
    done = WarmUp().done;
  }
  if (done.valid()) done.wait();
}

}  // namespace

WarmUpInBackground::WarmUpInBackground() {
  WarmUpState& s = WarmUp();
  std::lock_guard lock(s.mutex);
  if (s.done.valid()) return;
  // The library on this thread: loading it sets ORT_DISABLE_TELEMETRY, and
  // setenv may not race the getenv of another thread. Its failure is met
  // again where a session is made.
  if (!LoadedOrtLibrary()) return;
  s.done = std::async(std::launch::async, [] {
             try {
               (void)GlobalEnv();
             } catch (const std::exception&) {  // met again where a session is made
             }
             (void)RegisterEpLibraries();  // its failure: met again where a library is needed
           }).share();
  started_ = true;
}

WarmUpInBackground::~WarmUpInBackground() {
  if (started_) AwaitWarmUp();
}

Status CheckConfig(const RunConfig& config) {
  if (auto lib = LoadedOrtLibrary(); !lib) return std::unexpected(lib.error());
  AwaitWarmUp();
  try {
    Ort::SessionOptions options;
    return Configure(config, {}, options);
  } catch (const Ort::Exception& e) {
    const std::string what = e.what();
    const bool load = what.find("Failed to load") != std::string::npos ||
                      what.find("cannot open shared object") != std::string::npos;
    return Fail(load ? ErrorCode::kUnsupported : ErrorCode::kInvalidArgument,
                fmt::format("config [{}]: {}: {}", config.Label(),
                            load ? "an execution provider's libraries cannot be loaded (docs/gpu.md says what the "
                                   "CUDA and TensorRT EPs need)"
                                 : "ONNX Runtime refuses the config",
                            what));
  }
}

Status PrepareOrt() {
  if (auto lib = LoadedOrtLibrary(); !lib) return std::unexpected(lib.error());
  AwaitWarmUp();  // no library registered while a session is made
  return {};
}

Result<Session> Session::Create(const ModelSource& model, const RunConfig& config,
                                const SessionExtras& extras) {
  // The ORT first: an Impl destroyed with no ORT loaded would release its
  // empty Ort::Session through a null API table.
  PARITY_RETURN_IF_ERROR(PrepareOrt());
  auto impl = std::make_unique<Impl>();
  PARITY_RETURN_IF_ERROR(LoadSessionCore(*impl, model, config, extras));
  return Session(std::move(impl));
}

Status LoadSessionCore(SessionCore& core, const ModelSource& model, const RunConfig& config,
                       const SessionExtras& extras) {
  SessionCore* impl = &core;
  try {
    Ort::Env& env = GlobalEnv();
    Ort::SessionOptions options;
    PARITY_RETURN_IF_ERROR(Configure(config, extras, options));
    if (!extras.cpu_mem_arena) options.DisableCpuMemArena();
    // Bytes that reference external data: ORT reads it in place from the
    // model's folder (kOrtSessionOptionsModelExternalInitializersFileFolderPath).
    if (!model.is_file() && !model.external_data_dir().empty())
      options.AddConfigEntry("session.model_external_initializers_file_folder_path",
                             model.external_data_dir().c_str());
    // ORT writes the optimized model itself: to a temp name that is renamed
    // over the target once the session exists, so the file is whole or absent
    // (and removed if parity is interrupted meanwhile). A side file of its
    // weights, when asked for, is written by ORT under its own name.
    std::optional<AtomicFile> optimized;
    if (!config.optimized_model_path.empty()) {
      auto file = AtomicFile::Create(config.optimized_model_path);
      if (!file) return std::unexpected(file.error().With("optimized_model_path"));
      optimized.emplace(std::move(*file));
      options.SetOptimizedModelFilePath(optimized->temp_path().c_str());
    }
    std::optional<LogCapture> capture;
    if (extras.capture_optimizer_log) {
      capture.emplace();
      options.SetLogId(capture->log_id().c_str());
      // The "GraphTransformer X modified: N" lines are INFO; VERBOSE would
      // add ~10 times more lines that parity does not read.
      options.SetLogSeverityLevel(ORT_LOGGING_LEVEL_INFO);
    }

    const auto start = std::chrono::steady_clock::now();
    if (model.is_file()) {
      impl->session = Ort::Session(env, model.path().c_str(), options);
    } else {
      impl->session = Ort::Session(env, model.bytes().data(), model.bytes().size(), options);
    }
    impl->live.emplace();
    impl->creation_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (optimized) PARITY_RETURN_IF_ERROR(optimized->Commit());

    if (capture) {
      impl->optimizer_log = capture->TakeLines();
      impl->modified_optimizers = ModifiedOptimizers(impl->optimizer_log);
    }
    impl->profiling = !extras.profile_prefix.empty();
    if (Records(config, extras)) impl->ep_assignment = ReadAssignment(impl->session);

    const std::vector<std::string> input_names = impl->session.GetInputNames();
    for (size_t i = 0; i < input_names.size(); ++i)
      impl->inputs.push_back(ReadInfo(input_names[i], impl->session.GetInputTypeInfo(i)));
    const std::vector<std::string> output_names = impl->session.GetOutputNames();
    for (size_t i = 0; i < output_names.size(); ++i)
      impl->outputs.push_back(ReadInfo(output_names[i], impl->session.GetOutputTypeInfo(i)));
  } catch (const Ort::Exception& e) {
    return std::unexpected(FromOrtException(e, OrtStage::kLoad));
  } catch (const std::exception& e) {
    return RuntimeError(fmt::format("creating the ORT session: {}", e.what()));
  }
  return {};
}

Session::Session(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

const std::vector<TensorInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->outputs; }

std::vector<std::string> Session::input_names() const {
  std::vector<std::string> names;
  for (const TensorInfo& info : impl_->inputs) names.push_back(info.name);
  return names;
}

std::vector<std::string> Session::output_names() const {
  std::vector<std::string> names;
  for (const TensorInfo& info : impl_->outputs) names.push_back(info.name);
  return names;
}

double Session::creation_ms() const { return impl_->creation_ms; }
const std::vector<EpAssignment>& Session::ep_assignment() const { return impl_->ep_assignment; }

std::optional<int64_t> Session::CudaPeakBytes() const {
  try {
    // The CUDA EP registers its device arena under the name "Cuda"; a session
    // without it throws here, which means "no CUDA memory".
    const Ort::MemoryInfo cuda("Cuda", OrtArenaAllocator, 0, OrtMemTypeDefault);
    const Ort::Allocator allocator(impl_->session, cuda);
    const Ort::KeyValuePairs stats = allocator.GetStats();
    const char* peak = stats.GetValue("MaxInUse");
    if (peak == nullptr) return std::nullopt;
    return std::stoll(peak);
  } catch (const std::exception&) {  // Ort::Exception, or a non-number from stoll
    return std::nullopt;
  }
}
const std::vector<std::string>& Session::optimizer_log() const { return impl_->optimizer_log; }
const std::vector<std::string>& Session::modified_optimizers() const { return impl_->modified_optimizers; }

Result<std::string> Session::EndProfiling() {
  if (!impl_->profiling)
    return InvalidArgument("profiling is not enabled for this session (or already ended)");
  try {
    Ort::AllocatorWithDefaultOptions allocator;
    Ort::AllocatedStringPtr path = impl_->session.EndProfilingAllocated(allocator);
    impl_->profiling = false;
    return std::string(path.get());
  } catch (const Ort::Exception& e) {
    return std::unexpected(FromOrtException(e, OrtStage::kRun).With("ending the ORT profile"));
  }
}

}  // namespace parity::ort
