#include "engine/bench/bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "compare/metrics.h"
#include "core/build_info.h"
#include "engine/runner/runner.h"
#include "ort/session.h"

namespace parity {
namespace {

struct Measured {
  BenchConfigResult result;
  std::optional<TensorSet> outputs;
  std::vector<std::string> modified_optimizers;  // when captured
};

// What failed before a config ran: its error, bad input when the model or
// the config is (ORT refused to create the session for what it is).
Measured Failed(Measured m, const Error& e) {
  m.result.error = e.message();
  m.result.bad_input = e.code() == ErrorCode::kInvalidArgument;
  return m;
}

// One config on a Runner that keeps its session (in this process:
// RequireThisProcessesOrt): created, run once for its outputs, then timed.
// The runner, and so the session, is gone before the peak is read.
Measured MeasureConfig(const Model& model, const std::string& model_label, const BenchConfig& bc,
                       const Sample& sample, const LatencyOptions& latency, bool capture_log) {
  Measured m;
  m.result.label = bc.label;
  m.result.config = bc.config;
  const int64_t rss_before = CurrentRssBytes();
  {
    auto runner = MakeOrtRunner(bc.config);
    if (!runner) return Failed(std::move(m), runner.error());
    const RunnerJob job{.model = model_label, .loaded = &model, .keep_session = true, .sample = sample.name,
                        .cpu_mem_arena = true, .capture_optimizer_log = capture_log};
    if (auto prepared = (*runner)->Prepare(job); !prepared) return Failed(std::move(m), prepared.error());
    const ort::Session* session = (*runner)->kept_session();
    if (session == nullptr)
      return Failed(std::move(m), Error(ErrorCode::kInternal, "bench: no session in this process"));
    m.result.session_creation_ms = session->creation_ms();
    m.modified_optimizers = session->modified_optimizers();
    auto outputs = (*runner)->Run(job, sample.tensors);
    if (!outputs) {
      m.result.error = outputs.error().message();
      return m;
    }
    m.outputs = std::move(*outputs);
    auto stats = MeasureLatency(*session, sample.tensors, latency);
    if (!stats) {
      m.result.error = stats.error().message();
      return m;
    }
    m.result.latency = std::move(*stats);
    m.result.session_rss_bytes = std::max<int64_t>(0, CurrentRssBytes() - rss_before);
  }
  m.result.peak_rss_bytes = PeakRssBytes();
  return m;
}

// Largest |ref - test| over every output; sets nonfinite_mismatch.
void CompareWithReference(const TensorSet& ref, Measured& m) {
  if (!m.outputs) return;
  double worst = 0;
  for (const auto& [name, r] : ref) {
    const Tensor* t = m.outputs->Find(name);
    if (!t || t->size() != r.size()) {
      m.result.error = fmt::format("output '{}' differs in shape from the reference", name);
      return;
    }
    auto metrics = ComputeMetrics(r, *t, {});
    if (!metrics) {
      m.result.error = metrics.error().message();
      return;
    }
    worst = std::max(worst, metrics->max_abs);
    if (metrics->nan_mismatch > 0 || metrics->inf_mismatch > 0) m.result.nonfinite_mismatch = true;
  }
  m.result.max_abs_vs_reference = worst;
}

bool IsPlainLevel(const RunConfig& c, OptLevel level) {
  RunConfig plain;
  plain.opt_level = level;
  return RunConfigToJson(c) == RunConfigToJson(plain);
}

std::string DescribeTensors(const TensorSet& tensors) {
  std::string s;
  for (const auto& [name, t] : tensors)
    s += fmt::format("{}{} {} {}", s.empty() ? "" : ", ", name, DTypeName(t.dtype()),
                     ShapeToString(t.shape()));
  return s;
}

}  // namespace

Result<std::vector<BenchConfig>> ConfigsFromLevels(const std::string& comma_separated) {
  std::vector<BenchConfig> configs;
  size_t start = 0;
  while (start <= comma_separated.size()) {
    size_t comma = comma_separated.find(',', start);
    std::string name =
        comma_separated.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    PARITY_ASSIGN_OR_RETURN(OptLevel level, WithContext(OptLevelFromName(name), "--configs"));
    RunConfig c;
    c.opt_level = level;
    configs.push_back({std::string(OptLevelName(level)), c});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return configs;
}

Result<std::vector<BenchConfig>> BenchConfigSet(const std::string& levels, const Result<RunConfig>& on_providers) {
  std::vector<BenchConfig> configs;
  if (!levels.empty()) {
    PARITY_ASSIGN_OR_RETURN(configs, ConfigsFromLevels(levels));
  }
  if (configs.empty() || (on_providers && on_providers->providers.empty())) return configs;
  if (!on_providers) return std::unexpected(on_providers.error());
  const size_t count = configs.size();
  for (size_t i = 0; i < count; ++i) {
    RunConfig config = configs[i].config;
    config.providers = on_providers->providers;
    config.provider_options = on_providers->provider_options;
    configs.push_back({config.Label(), config});
  }
  return configs;
}

Status BenchStatus(const BenchReport& report) {
  for (const auto& c : report.configs)
    if (!c.error.empty() && c.bad_input) return InvalidArgument(c.error);
  for (const auto& c : report.configs)
    if (!c.error.empty()) return RuntimeError(fmt::format("config '{}' failed (see the table above)", c.label));
  return {};
}

namespace {

// The reference: the config named by options.reference, else the first plain
// `disable`; -1 when there is none. kInvalidArgument when a named one is missing.
Result<int> FindReference(const BenchOptions& options) {
  for (size_t i = 0; i < options.configs.size(); ++i) {
    const auto& c = options.configs[i];
    if (options.reference.empty() ? IsPlainLevel(c.config, OptLevel::kDisable) : c.label == options.reference)
      return static_cast<int>(i);
  }
  if (!options.reference.empty())
    return InvalidArgument(fmt::format("bench: the reference '{}' is not among the configs", options.reference));
  return -1;
}

// The first plain `all` config (fusions are switched off from it); -1 when none.
int FindFusedConfig(const std::vector<BenchConfig>& configs) {
  for (size_t i = 0; i < configs.size(); ++i)
    if (configs[i].config.opt_level == OptLevel::kAll && configs[i].config.disabled_optimizers.empty())
      return static_cast<int>(i);
  return -1;
}

// What switching `optimizer` off changed: `without` against `with`.
FusionTrade TradeOf(const std::string& optimizer, const Measured& with, Measured without) {
  FusionTrade trade;
  trade.optimizer = optimizer;
  trade.switched_off =
      std::find(without.modified_optimizers.begin(), without.modified_optimizers.end(), optimizer) ==
      without.modified_optimizers.end();
  if (without.result.error.empty()) {
    trade.speed_ms = without.result.latency.p50_ms - with.result.latency.p50_ms;
    if (without.result.max_abs_vs_reference >= 0 && with.result.max_abs_vs_reference >= 0)
      trade.precision_cost = with.result.max_abs_vs_reference - without.result.max_abs_vs_reference;
  }
  trade.without = std::move(without.result);
  return trade;
}

// --fusions: each optimizer that changed the fused config's graph, switched
// off on its own. `with` is the fused config's measurement (`base`).
Status MeasureFusions(const Model& model, const std::string& model_label, const Sample& sample,
                      const BenchOptions& options, const BenchConfig& base, const Measured& with,
                      const std::optional<TensorSet>& ref_outputs, BenchReport& report) {
  if (!with.result.error.empty())
    return RuntimeError(fmt::format("bench --fusions: the '{}' config failed: {}", base.label, with.result.error));
  for (const std::string& optimizer : with.modified_optimizers) {
    BenchConfig without = base;
    without.label = fmt::format("{} -{}", base.label, optimizer);
    without.config.disabled_optimizers.push_back(optimizer);
    Measured m = MeasureConfig(model, model_label, without, sample, options.latency, /*capture_log=*/true);
    if (ref_outputs) CompareWithReference(*ref_outputs, m);
    report.fusions.push_back(TradeOf(optimizer, with, std::move(m)));
  }
  return {};
}

// bench times sessions in its own process: a config on another ORT release
// (its ort_library, which a Runner runs in a child process) is the user's
// mistake, said before anything runs.
Status RequireThisProcessesOrt(const std::vector<BenchConfig>& configs) {
  for (const BenchConfig& c : configs) {
    if (c.config.ort_library.empty()) continue;
    PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Runner> runner,
                            WithContext(MakeOrtRunner(c.config), fmt::format("bench: config '{}'", c.label)));
    if (runner->ran().kind == RanWhat::Kind::kOrtSession) continue;
    const OrtFact here = CurrentOrt();
    return InvalidArgument(fmt::format(
        "bench: config '{}' runs on ONNX Runtime {} ({}), not this process's {} ({}): bench times "
        "sessions in its own process; run `parity bench --ort-library {}` for that release",
        c.label, runner->ran().ort.version, runner->ran().ort.library, here.version, here.library,
        c.config.ort_library));
  }
  return {};
}

}  // namespace

Result<BenchReport> RunBench(const Model& model, const std::string& model_label, const Sample& sample,
                             const BenchOptions& options) {
  if (options.configs.empty() && !options.fusions) return InvalidArgument("bench: no config to measure");
  PARITY_RETURN_IF_ERROR(RequireThisProcessesOrt(options.configs));

  BenchReport report;
  report.tool_version = PARITY_VERSION;
  report.ort = CurrentOrt();
  report.model = model_label;
  report.sample = sample.name;
  report.input_summary = DescribeTensors(sample.tensors);
  report.warmup = options.latency.warmup;
  report.runs = options.latency.runs;
  report.max_seconds = options.latency.max_seconds;

  PARITY_ASSIGN_OR_RETURN(const int reference, FindReference(options));
  // Measure the reference first so every other config can be compared as it runs.
  std::vector<size_t> order;
  if (reference >= 0) order.push_back(static_cast<size_t>(reference));
  for (size_t i = 0; i < options.configs.size(); ++i)
    if (static_cast<int>(i) != reference) order.push_back(i);

  std::optional<TensorSet> ref_outputs;
  std::vector<std::optional<Measured>> measured(options.configs.size());
  const int fused = FindFusedConfig(options.configs);
  for (size_t i : order) {
    bool capture = options.fusions && static_cast<int>(i) == fused;
    Measured m = MeasureConfig(model, model_label, options.configs[i], sample, options.latency, capture);
    if (static_cast<int>(i) == reference) {
      if (m.outputs) ref_outputs = *m.outputs;
      report.reference = m.result.label;
    }
    if (ref_outputs) CompareWithReference(*ref_outputs, m);
    measured[i] = std::move(m);
  }
  for (auto& m : measured) report.configs.push_back(m->result);
  if (!options.fusions) return report;

  report.fusions_requested = true;
  BenchConfig base{"all", {}};
  base.config.opt_level = OptLevel::kAll;
  if (fused >= 0) base = options.configs[fused];
  report.fused_config = base.label;
  Measured with = fused >= 0 ? std::move(*measured[fused])
                             : MeasureConfig(model, model_label, base, sample, options.latency, /*capture_log=*/true);
  if (fused < 0 && ref_outputs) CompareWithReference(*ref_outputs, with);
  PARITY_RETURN_IF_ERROR(MeasureFusions(model, model_label, sample, options, base, with, ref_outputs, report));
  return report;
}

}  // namespace parity
