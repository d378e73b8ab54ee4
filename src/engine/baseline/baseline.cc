// Writing a baseline directory: the files, the checks made while writing, and
// the manifest, written last.
#include "engine/baseline/baseline.h"

#include <algorithm>
#include <optional>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "compare/tolerance.h"
#include "core/atomic_file.h"
#include "core/input_files.h"
#include "core/json_out.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/staged_dir.h"
#include "engine/baseline/baseline_internal.h"
#include "engine/bench/latency.h"
#include "engine/inputs/input_check.h"
#include "engine/load/samples.h"
#include "engine/run/flatten_control_flow.h"
#include "engine/run/environment.h"
#include "engine/run/environment_json.h"
#include "engine/run/tensor_source.h"
#include "engine/run/trace.h"
#include "onnx/graph.h"
#include "onnx/inspect.h"
#include "ort/session.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

using baseline_internal::CheckDeterminism;
using baseline_internal::FileTemplates;
using baseline_internal::Layer;
using baseline_internal::NameFiles;
using baseline_internal::RecordFindings;
using baseline_internal::WriteSampleFiles;

bool KeepLayer(const std::vector<std::string>& only, const std::string& tensor, const GraphNode& node) {
  if (only.empty()) return true;
  for (const auto& pattern : only)
    if (pattern == node.op_type || GlobMatch(pattern, tensor) || GlobMatch(pattern, node.name)) return true;
  return false;
}

std::string InputsSha(const fs::path& inputs) {
  std::error_code ec;
  if (!fs::is_regular_file(inputs, ec)) return "";
  auto sha = Sha256FileHex(inputs);
  return sha ? *sha : "";
}

}  // namespace

Result<MemoryPlan> PlanBaselineMemory(const MemoryPlanInput& in) {
  MemoryPlan plan;
  // One batch's session: the exposed model's copy and ORT's copy of the
  // initializers, plus ORT's own per-session cost. One run besides the
  // observed tensors: the outputs (in ORT's arena and copied out) and the
  // working tensors that are not observed (an op's input and output).
  // Weights read in place from their external data file have ORT's copy only.
  const int64_t weight_copies = in.weights_read_in_place ? 1 : 2;
  plan.reserved_bytes = weight_copies * in.initializer_bytes + kSessionOverheadBytes + 2 * in.output_bytes + 2 * in.largest_bytes;
  const int64_t spare = in.limit_bytes - in.resident_bytes - plan.reserved_bytes;
  plan.batch_bytes = spare / kBatchCostFactor;
  const int64_t need = std::max<int64_t>(in.largest_observed_bytes, 1);
  if (plan.batch_bytes < need) {
    constexpr int64_t kMiB = int64_t{1} << 20;
    const int64_t minimum = in.resident_bytes + plan.reserved_bytes + kBatchCostFactor * need;
    const auto mib = [](int64_t b) { return static_cast<double>(b) / (1 << 20); };
    return InvalidArgument(fmt::format(
        "--max-memory {:.1f} MiB is too small for this model: the process already holds {:.1f} MiB (the runtime, "
        "the model, the inputs), a run needs {:.1f} MiB besides the observed tensors, and the largest observed "
        "tensor ({:.1f} MiB) needs {:.1f} MiB; use at least --max-memory {}M",
        mib(in.limit_bytes), mib(in.resident_bytes), mib(plan.reserved_bytes), mib(in.largest_observed_bytes),
        mib(kBatchCostFactor * need), (minimum + kMiB - 1) / kMiB));
  }
  return plan;
}

bool BaselineResult::deterministic() const {
  return std::all_of(samples.begin(), samples.end(), [](const auto& s) { return s.nondeterministic.empty(); });
}

namespace {

// What a baseline is made from, read and checked before anything is written.
struct BaselineSource {
  std::string model_sha;  // set once the background hash is there, before the manifest
  Model model;
  GraphView graph;
  ModelInfo info;
  std::vector<Sample> samples;
};

Result<BaselineSource> LoadModelAndSamples(const fs::path& model_path, const fs::path& inputs_path) {
  const std::string label = model_path.string();
  BaselineSource src;
  PARITY_ASSIGN_OR_RETURN(src.model, Model::Load(model_path));
  PARITY_ASSIGN_OR_RETURN(src.graph, WithContext(BuildGraphView(src.model), label));
  src.info = Inspect(src.model);
  PARITY_ASSIGN_OR_RETURN(src.samples, LoadSamplesFor(src.model, inputs_path, {.model_label = label}));
  return src;
}

// The observed layers: every intermediate tensor that is not a graph output
// and that --only keeps, in topological order.
std::vector<Layer> SelectLayers(const GraphView& graph, const std::vector<std::string>& only) {
  std::vector<Layer> layers;
  for (const auto& t : IntermediateTensors(graph)) {
    const GraphNode& node = graph.nodes[t.producer];
    if (t.is_graph_output || !KeepLayer(only, t.name, node)) continue;
    layers.push_back({t.name, "", node.name, node.op_type, static_cast<int64_t>(layers.size())});
  }
  return layers;
}

// Memory (docs/baseline.md "Memory"): what the process already holds, what a
// run costs besides the observed tensors, and what is left for a batch; the
// plan goes into `result`.
Status PlanMemory(const BaselineSource& src, const std::vector<std::string>& observed,
                  const TraceOptions& trace_options, int64_t budget, const BaselineOptions& options,
                  BaselineResult& result) {
  MemoryPlanInput in;
  in.limit_bytes = budget;
  in.resident_bytes = CurrentRssBytes();
  in.initializer_bytes = src.info.initializer_bytes;
  in.weights_read_in_place = !src.model.external_data_dir().empty();
  for (const auto& t : src.samples[0].tensors)
    in.largest_bytes = std::max<int64_t>(in.largest_bytes, static_cast<int64_t>(t.tensor.byte_size()));
  const auto layer_sizes = EstimateTensorBytes(src.graph, observed, trace_options.input_shapes);
  const auto output_sizes = EstimateTensorBytes(src.graph, src.graph.outputs, trace_options.input_shapes);
  for (const auto& s : layer_sizes)
    if (s) in.largest_bytes = std::max(in.largest_bytes, *s);
  for (const auto& s : output_sizes)
    if (s) in.largest_bytes = std::max(in.largest_bytes, *s);
  // Unknown sizes count as the largest known tensor (as trace.h plans them).
  for (const auto& s : layer_sizes)
    in.largest_observed_bytes = std::max(in.largest_observed_bytes, s.value_or(in.largest_bytes));
  for (const auto& s : output_sizes) in.output_bytes += s.value_or(in.largest_bytes);
  PARITY_ASSIGN_OR_RETURN(MemoryPlan plan, PlanBaselineMemory(in));
  result.batch_bytes_limit = options.batch_bytes > 0 ? options.batch_bytes : plan.batch_bytes;
  result.resident_bytes = in.resident_bytes;
  result.reserved_bytes = plan.reserved_bytes;
  return {};
}

// The tracer over the observed layers, batched to the memory plan (which it
// puts into `result`).
Result<Tracer> CreateTracer(const BaselineSource& src, const std::vector<Layer>& layers, int64_t budget,
                            const BaselineOptions& options, const std::string& label, BaselineResult& result) {
  TraceOptions trace_options{.graph = &src.graph};
  for (const auto& t : src.samples[0].tensors) trace_options.input_shapes[t.name] = t.tensor.shape();
  std::vector<std::string> observed;
  for (const auto& l : layers) observed.push_back(l.tensor);
  PARITY_RETURN_IF_ERROR(PlanMemory(src, observed, trace_options, budget, options, result));
  trace_options.max_batch_bytes = result.batch_bytes_limit;
  PARITY_ASSIGN_OR_RETURN(Tracer tracer,
                          Tracer::Create(src.model, options.config, observed, label, std::move(trace_options)));
  result.batches = tracer.batches().size();
  return tracer;
}

// Every sample has every input and its own sub-directory: checked before
// anything is written.
Status CheckSamples(const BaselineSource& src, const fs::path& inputs_path) {
  std::set<std::string> sample_dirs;
  for (const Sample& sample : src.samples) {
    for (const auto& name : src.graph.inputs)
      if (sample.tensors.Find(name) == nullptr)
        return InvalidArgument(
            fmt::format("{}: sample '{}' has no input '{}'", inputs_path.string(), sample.name, name));
    const std::string subdir = src.samples.size() == 1 ? "" : SanitizeFileName(sample.name);
    if (!sample_dirs.insert(subdir).second)
      return InvalidArgument(fmt::format("{}: two samples map to directory '{}'", inputs_path.string(), subdir));
  }
  return {};
}

// Writes every sample's files into `dir` (the staging folder), each in its
// own sub-directory when there are several.
Status WriteSamples(Tracer& tracer, const BaselineSource& src, FileTemplates& templates, const fs::path& dir,
                    const fs::path& inputs_path, const BaselineOptions& options, BaselineResult& result,
                    bool subdirs) {
  for (const Sample& sample : src.samples) {
    const std::string subdir = subdirs ? SanitizeFileName(sample.name) : "";
    const fs::path sample_dir = dir / subdir;
    std::error_code ec;
    fs::create_directories(sample_dir, ec);
    if (ec) return InvalidArgument(fmt::format("{}: {}", sample_dir.string(), ec.message()));
    PARITY_ASSIGN_OR_RETURN(BaselineSample out, WriteSampleFiles(tracer, sample, sample_dir, subdir,
                                                                 src.graph.inputs, templates, inputs_path));
    if (options.check_determinism) PARITY_RETURN_IF_ERROR(CheckDeterminism(tracer, sample, out));
    RecordFindings(out);
    result.samples.push_back(std::move(out));
  }
  return {};
}

// A model with control flow: each sample traced on its own observation copy
// (engine/run/flatten_control_flow.h), whose layers include the bodies' tensors.
Status WriteThroughControlFlow(const BaselineSource& src, const fs::path& dir, const fs::path& inputs_path,
                               const BaselineOptions& options, int64_t budget, BaselineResult& result) {
  const std::string label = src.model.path().string();
  for (const Sample& sample : src.samples) {
    PARITY_ASSIGN_OR_RETURN(FlatModel flat, FlattenForSample(src.model, sample, label, {.probe = options.config}));
    AddSample(result.control_flow, flat);
    BaselineSource one{.model = std::move(flat.model), .info = src.info, .samples = {sample}};
    PARITY_ASSIGN_OR_RETURN(one.graph, WithContext(BuildGraphView(one.model), label));
    const std::vector<Layer> layers = SelectLayers(one.graph, options.only);
    FileTemplates templates = NameFiles(one.graph, layers);
    PARITY_ASSIGN_OR_RETURN(Tracer tracer, CreateTracer(one, layers, budget, options, label, result));
    PARITY_RETURN_IF_ERROR(
        WriteSamples(tracer, one, templates, dir, inputs_path, options, result, src.samples.size() > 1));
  }
  NoteUntakenBranches(result.control_flow);
  return {};
}

nlohmann::json BuildManifest(const BaselineSource& src, const fs::path& model_path, const fs::path& inputs_path,
                             const BaselineOptions& options, int64_t budget, const BaselineResult& result) {
  nlohmann::json j;
  j["schema"] = kBaselineSchema;
  j["tool"] = {{"name", "parity"}, {"version", CurrentEnvironment().parity_version}};
  j["ort_version"] = CurrentEnvironment().ort_version;
  j["env"] = EnvironmentToJson(CurrentEnvironment());
  j["model"] = {{"path", model_path.string()}, {"sha256", src.model_sha}, {"inputs", src.graph.inputs},
                {"outputs", src.graph.outputs}, {"opsets", src.info.opsets}};
  j["inputs"] = {{"path", inputs_path.string()}, {"sha256", InputsSha(inputs_path)}};
  j["config"] = RunConfigToJson(options.config);
  j["only"] = options.only;
  j["memory"] = {{"max_memory_bytes", budget},
                 {"resident_bytes_at_start", result.resident_bytes},
                 {"reserved_bytes", result.reserved_bytes},
                 {"batch_bytes_limit", result.batch_bytes_limit},
                 {"batches", result.batches}};
  j["samples"] = nlohmann::json::array();
  for (const auto& s : result.samples) j["samples"].push_back(baseline_internal::SampleToJson(s));
  if (result.control_flow.present) j["control_flow"] = baseline_internal::ControlFlowJson(result.control_flow);
  return j;
}

}  // namespace

Result<BaselineResult> WriteBaseline(const fs::path& model_path, const fs::path& inputs_path, const fs::path& dir,
                                     const BaselineOptions& options) {
  const std::string label = model_path.string();
  Sha256FileInBackground model_sha(model_path);  // while the baseline is made
  ort::WarmUpInBackground ort_ready;  // ORT and its plugins, while the model is read
  PARITY_ASSIGN_OR_RETURN(BaselineSource src, LoadModelAndSamples(model_path, inputs_path));
  PARITY_RETURN_IF_ERROR(CheckSamples(src, inputs_path));
  PARITY_RETURN_IF_ERROR(baseline_internal::CheckTargetDir(dir, options.overwrite));
  BaselineResult result;
  const int64_t budget = options.max_memory_bytes > 0 ? options.max_memory_bytes
                                                      : DefaultBaselineMemory(src.info.initializer_bytes);
  // Written whole or not at all: into a staging folder beside `dir`, put in
  // place once the manifest is written (an error or an interrupt leaves
  // `dir` as it was).
  std::optional<StagedDir> staged;
  const auto stage = [&]() -> Status {
    PARITY_ASSIGN_OR_RETURN(StagedDir created, StagedDir::Create(dir));
    staged.emplace(std::move(created));
    return {};
  };
  if (HasControlFlow(src.model)) {
    PARITY_RETURN_IF_ERROR(stage());
    PARITY_RETURN_IF_ERROR(WriteThroughControlFlow(src, staged->path(), inputs_path, options, budget, result));
  } else {
    const std::vector<Layer> layers = SelectLayers(src.graph, options.only);
    FileTemplates templates = NameFiles(src.graph, layers);
    PARITY_ASSIGN_OR_RETURN(Tracer tracer, CreateTracer(src, layers, budget, options, label, result));
    src.model = Model();  // the tracer holds what it needs
    PARITY_RETURN_IF_ERROR(stage());
    PARITY_RETURN_IF_ERROR(WriteSamples(tracer, src, templates, staged->path(), inputs_path, options, result,
                                        src.samples.size() > 1));
  }

  PARITY_ASSIGN_OR_RETURN(src.model_sha, model_sha.get());
  nlohmann::json j = BuildManifest(src, model_path, inputs_path, options, budget, result);
  const std::string text = ToJsonText(j, 2) + "\n";
  PARITY_RETURN_IF_ERROR(
      WithContext(WriteFileAtomic(staged->path() / "manifest.json", std::string_view(text), Sync::kByFolder),
                  (dir / "manifest.json").string()));
  PARITY_RETURN_IF_ERROR(staged->Commit(options.overwrite));
  result.dir = dir;
  result.manifest = std::move(j);
  return result;
}

}  // namespace parity
