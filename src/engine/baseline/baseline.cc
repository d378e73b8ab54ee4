// Writing a baseline directory: the files, the checks made while writing, and
// the manifest, written last.
#include "engine/baseline/baseline.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <set>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "compare/tolerance.h"
#include "core/atomic_file.h"
#include "core/input_files.h"
#include "core/json_out.h"
#include "core/npy.h"
#include "core/npy_header.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/staged_dir.h"
#include "engine/baseline/baseline_internal.h"
#include "engine/bench/latency.h"
#include "engine/inputs/input_check.h"
#include "engine/load/samples.h"
#include "engine/run/environment.h"
#include "engine/run/environment_json.h"
#include "engine/run/tensor_source.h"
#include "engine/run/trace.h"
#include "onnx/graph.h"
#include "onnx/inspect.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

struct Layer {
  std::string tensor, file, producer, op_type;
  int64_t index = 0;
};

bool KeepLayer(const std::vector<std::string>& only, const std::string& tensor, const GraphNode& node) {
  if (only.empty()) return true;
  for (const auto& pattern : only)
    if (pattern == node.op_type || GlobMatch(pattern, tensor) || GlobMatch(pattern, node.name)) return true;
  return false;
}

// Gives each name a unique file name "<prefix><sanitised>.npy".
class FileNamer {
 public:
  std::string Make(const std::string& stem) {
    std::string name = stem;
    for (int n = 1; !used_.insert(name).second; ++n) name = fmt::format("{}_{}", stem, n);
    return name + ".npy";
  }

 private:
  std::unordered_set<std::string> used_;
};

// The SHA-256 of the .npy file of `t` with its `header`: the manifest's
// sha256, and what determinism's second run is compared with.
std::string NpySha256(std::span<const std::byte> header, const Tensor& t) {
  Sha256Hasher hasher;
  hasher.Update(header);
  hasher.Update(t.bytes());
  return DigestToHex(hasher.Finish());
}

// Writes one tensor as .npy (header, then the data straight from the tensor:
// no second copy of a large tensor), its SHA-256 and statistics computed on
// a second thread while the kernel copies the bytes for a large tensor
// (gpt2_small's 150 MB transposed embedding, 553 files: hashing, statistics
// and writing one after the other were most of baseline's time after the
// run).
Status WriteTensorFile(const fs::path& path, const Tensor& t, BaselineFile& rec) {
  constexpr size_t kOverlapFrom = size_t{1} << 20;
  PARITY_ASSIGN_OR_RETURN(std::string header, WithContext(EncodeNpyHeader(t.dtype(), t.shape()), path.string()));
  PARITY_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path, Sync::kByFolder));  // in the StagedDir
  const auto header_bytes = std::as_bytes(std::span(header.data(), header.size()));
  const auto summarize = [&] {
    rec.stats = ComputeStats(t);
    rec.sha256 = NpySha256(header_bytes, t);
  };
  std::future<void> summary;
  if (t.byte_size() >= kOverlapFrom) summary = std::async(std::launch::async, summarize);
  Status written = file.Write(header_bytes);
  if (written) written = file.Write(t.bytes());
  if (written) written = WithContext(file.Commit(), path.string());
  if (summary.valid()) summary.get();  // joined before `t` or `rec` can go
  else summarize();
  PARITY_RETURN_IF_ERROR(written);
  rec.bytes = static_cast<int64_t>(header.size() + t.byte_size());
  rec.dtype = std::string(DTypeName(t.dtype()));
  rec.shape = t.shape();
  return {};
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

// Each tensor's file record before it is written: file name, role, producer
// (the same names in every sample's directory). Inputs apart: a graph input
// that is also an output has a file for each role.
struct FileTemplates {
  std::unordered_map<std::string, BaselineFile> inputs;
  std::unordered_map<std::string, BaselineFile> others;  // layers and outputs
};

FileTemplates NameFiles(const GraphView& graph, const std::vector<Layer>& layers) {
  const int width = std::max<int>(4, static_cast<int>(std::to_string(layers.size()).size()));
  FileNamer namer;
  FileTemplates templates;
  auto add = [&](const std::string& tensor, FileRole role, const std::string& stem, int64_t index,
                 const std::string& producer, const std::string& op) {
    auto& target = role == FileRole::kInput ? templates.inputs : templates.others;
    BaselineFile f;
    f.file = namer.Make(stem);
    f.tensor = tensor;
    f.role = role;
    f.index = index;
    f.producer = producer;
    f.op_type = op;
    target[tensor] = f;
  };
  for (const auto& name : graph.inputs)
    add(name, FileRole::kInput, graph.inputs.size() == 1 ? "input" : "input_" + SanitizeFileName(name), -1, "", "");
  for (const auto& l : layers)
    add(l.tensor, FileRole::kLayer, fmt::format("layer_{:0{}}_{}", l.index, width, SanitizeFileName(l.tensor)), l.index,
        l.producer, l.op_type);
  for (const auto& name : graph.outputs) {
    const GraphNode* p = graph.Producer(name);
    add(name, FileRole::kOutput, graph.outputs.size() == 1 ? "output" : "output_" + SanitizeFileName(name), -1,
        p ? p->name : "", p ? p->op_type : "");
  }
  return templates;
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
  const auto layer_sizes = EstimateTensorBytes(src.model, observed, trace_options.input_shapes);
  const auto output_sizes = EstimateTensorBytes(src.model, src.graph.outputs, trace_options.input_shapes);
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
  TraceOptions trace_options;
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

// One sample's files, written in file order (inputs, layers, outputs); each
// file's sha256 is what the sample's second run is checked against.
struct WrittenSample {
  BaselineSample out;
};

Result<WrittenSample> WriteSampleFiles(Tracer& tracer, const Sample& sample, const fs::path& sample_dir,
                                       const std::string& sample_subdir, const std::vector<std::string>& inputs,
                                       FileTemplates& templates, const fs::path& inputs_path) {
  WrittenSample w;
  BaselineSample& out = w.out;
  out.name = sample.name;
  out.dir = sample_subdir;
  auto rel = [&](const std::string& file) { return out.dir.empty() ? file : out.dir + "/" + file; };
  for (const auto& name : inputs) {
    const Tensor* t = sample.tensors.Find(name);
    if (t == nullptr)
      return InvalidArgument(fmt::format("{}: sample '{}' has no input '{}'", inputs_path.string(), sample.name, name));
    BaselineFile rec = templates.inputs[name];
    PARITY_RETURN_IF_ERROR(WriteTensorFile(sample_dir / rec.file, *t, rec));
    out.input_scale = std::max(out.input_scale, rec.stats.max_abs);
    rec.file = rel(rec.file);
    out.files.push_back(std::move(rec));
  }
  const double scale_limit = kScaleFactor * std::max(1.0, out.input_scale);
  std::vector<BaselineFile> outputs;
  auto sink = [&](const std::string& name, const Tensor& t) -> Status {
    BaselineFile rec = templates.others[name];
    PARITY_RETURN_IF_ERROR(WriteTensorFile(sample_dir / rec.file, t, rec));
    rec.file = rel(rec.file);
    rec.out_of_scale = rec.stats.max_abs > scale_limit;
    (rec.role == FileRole::kOutput ? outputs : out.files).push_back(std::move(rec));
    return {};
  };
  PARITY_RETURN_IF_ERROR(tracer.Trace(sample, sink));
  for (auto& rec : outputs) out.files.push_back(std::move(rec));
  return w;
}

// The second run: hashes every tensor again as its file would be and marks
// the files whose bytes differ from the first run's (inputs are given, never
// non-deterministic). The first run hashed each tensor once, as its file.
Status CheckDeterminism(Tracer& tracer, const Sample& sample, WrittenSample& w) {
  std::unordered_map<std::string, const std::string*> first;  // tensor -> its file's sha256
  for (const auto& rec : w.out.files) first.emplace(rec.tensor, &rec.sha256);
  std::unordered_set<std::string> differing;
  auto recheck = [&](const std::string& name, const Tensor& t) -> Status {
    PARITY_ASSIGN_OR_RETURN(std::string header, EncodeNpyHeader(t.dtype(), t.shape()));
    const auto it = first.find(name);
    if (it == first.end() ||
        *it->second != NpySha256(std::as_bytes(std::span(header.data(), header.size())), t))
      differing.insert(name);
    return {};
  };
  PARITY_RETURN_IF_ERROR(tracer.Trace(sample, recheck));
  for (auto& rec : w.out.files) {
    rec.deterministic = !differing.contains(rec.tensor) || rec.role == FileRole::kInput;
    if (!rec.deterministic) w.out.nondeterministic.push_back(rec.tensor);
  }
  return {};
}

// The first NaN, the first Inf and the out-of-scale tensors, in file order.
void RecordFindings(BaselineSample& out) {
  for (const auto& rec : out.files) {
    if (rec.stats.nan > 0 && !out.first_nan) out.first_nan = rec.tensor;
    if (rec.stats.inf > 0 && !out.first_inf) out.first_inf = rec.tensor;
    if (rec.out_of_scale) out.out_of_scale.push_back(rec.tensor);
  }
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
                    const fs::path& inputs_path, const BaselineOptions& options, BaselineResult& result) {
  for (const Sample& sample : src.samples) {
    const std::string subdir = src.samples.size() == 1 ? "" : SanitizeFileName(sample.name);
    const fs::path sample_dir = dir / subdir;
    std::error_code ec;
    fs::create_directories(sample_dir, ec);
    if (ec) return InvalidArgument(fmt::format("{}: {}", sample_dir.string(), ec.message()));
    PARITY_ASSIGN_OR_RETURN(WrittenSample w, WriteSampleFiles(tracer, sample, sample_dir, subdir, src.graph.inputs,
                                                             templates, inputs_path));
    if (options.check_determinism) PARITY_RETURN_IF_ERROR(CheckDeterminism(tracer, sample, w));
    RecordFindings(w.out);
    result.samples.push_back(std::move(w.out));
  }
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
  return j;
}

}  // namespace

Result<BaselineResult> WriteBaseline(const fs::path& model_path, const fs::path& inputs_path, const fs::path& dir,
                                     const BaselineOptions& options) {
  const std::string label = model_path.string();
  Sha256FileInBackground model_sha(model_path);  // while the baseline is made
  PARITY_ASSIGN_OR_RETURN(BaselineSource src, LoadModelAndSamples(model_path, inputs_path));
  PARITY_RETURN_IF_ERROR(CheckSamples(src, inputs_path));
  PARITY_RETURN_IF_ERROR(baseline_internal::CheckTargetDir(dir, options.overwrite));
  const std::vector<Layer> layers = SelectLayers(src.graph, options.only);
  FileTemplates templates = NameFiles(src.graph, layers);

  BaselineResult result;
  const int64_t budget = options.max_memory_bytes > 0 ? options.max_memory_bytes
                                                      : DefaultBaselineMemory(src.info.initializer_bytes);
  PARITY_ASSIGN_OR_RETURN(Tracer tracer, CreateTracer(src, layers, budget, options, label, result));
  src.model = Model();  // the tracer holds what it needs
  // Written whole or not at all: into a staging folder beside `dir`, put in
  // place once the manifest is written (an error or an interrupt leaves
  // `dir` as it was).
  PARITY_ASSIGN_OR_RETURN(StagedDir staged, StagedDir::Create(dir));
  PARITY_RETURN_IF_ERROR(WriteSamples(tracer, src, templates, staged.path(), inputs_path, options, result));

  PARITY_ASSIGN_OR_RETURN(src.model_sha, model_sha.get());
  nlohmann::json j = BuildManifest(src, model_path, inputs_path, options, budget, result);
  const std::string text = ToJsonText(j, 2) + "\n";
  PARITY_RETURN_IF_ERROR(
      WithContext(WriteFileAtomic(staged.path() / "manifest.json", std::string_view(text), Sync::kByFolder),
                  (dir / "manifest.json").string()));
  PARITY_RETURN_IF_ERROR(staged.Commit(options.overwrite));
  result.dir = dir;
  result.manifest = std::move(j);
  return result;
}

}  // namespace parity
