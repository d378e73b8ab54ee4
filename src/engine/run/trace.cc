#include "engine/run/trace.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "engine/runner/runner.h"
#include "onnx/edit.h"
#include "onnx/graph.h"

namespace parity {
namespace {

// Symbol -> value, from graph inputs whose declared dims are symbolic and
// whose actual shapes are given.
std::unordered_map<std::string, int64_t> ResolveSymbols(const GraphView& g,
                                                        const std::map<std::string, Shape>& input_shapes) {
  std::unordered_map<std::string, int64_t> symbols;
  for (const auto& name : g.inputs) {
    auto shape = input_shapes.find(name);
    const TensorType* type = g.Type(name);
    if (shape == input_shapes.end() || type == nullptr || !type->has_shape) continue;
    if (type->dims.size() != shape->second.size()) continue;
    for (size_t i = 0; i < type->dims.size(); ++i)
      if (type->dims[i].kind == Dim::Kind::kSymbolic) symbols.emplace(type->dims[i].symbol, shape->second[i]);
  }
  return symbols;
}

std::optional<int64_t> Bytes(const TensorType* type, const std::unordered_map<std::string, int64_t>& symbols) {
  if (type == nullptr || !type->dtype || !type->has_shape) return std::nullopt;
  const size_t element = DTypeSize(*type->dtype);
  if (element == 0) return std::nullopt;  // strings: size unknown
  int64_t count = 1;
  for (const Dim& d : type->dims) {
    int64_t v = -1;
    if (d.kind == Dim::Kind::kKnown) v = d.value;
    if (d.kind == Dim::Kind::kSymbolic) {
      auto it = symbols.find(d.symbol);
      if (it != symbols.end()) v = it->second;
    }
    if (v < 0) return std::nullopt;
    if (v > 0 && count > (int64_t{1} << 50) / v) return std::nullopt;
    count *= v;
  }
  return count * static_cast<int64_t>(element);
}

}  // namespace

std::vector<std::optional<int64_t>> EstimateTensorBytes(const GraphView& g, const std::vector<std::string>& tensors,
                                                        const std::map<std::string, Shape>& input_shapes) {
  const auto symbols = ResolveSymbols(g, input_shapes);
  std::vector<std::optional<int64_t>> out;
  for (const auto& name : tensors) {
    auto given = input_shapes.find(name);
    const TensorType* type = g.Type(name);
    if (given != input_shapes.end() && type && type->dtype && DTypeSize(*type->dtype) > 0) {
      auto n = ElementCount(given->second);
      out.push_back(n ? std::optional<int64_t>(*n * static_cast<int64_t>(DTypeSize(*type->dtype))) : std::nullopt);
      continue;
    }
    out.push_back(Bytes(type, symbols));
  }
  return out;
}

std::vector<std::optional<int64_t>> EstimateTensorBytes(const Model& model, const std::vector<std::string>& tensors,
                                                        const std::map<std::string, Shape>& input_shapes) {
  auto g = BuildGraphView(model);
  if (!g) return std::vector<std::optional<int64_t>>(tensors.size());
  return EstimateTensorBytes(*g, tensors, input_shapes);
}

struct Tracer::Impl {
  Model model;
  RunConfig config;
  std::string label;
  std::unordered_set<std::string> graph_inputs;
  std::vector<std::string> outputs;  // graph outputs
  std::vector<std::vector<std::string>> batches;
  std::vector<int64_t> batch_bytes;
  std::unique_ptr<Runner> runner;  // on `config`, in this process
  // Single-batch mode: the one job, its session kept from Create on (its
  // model is not read again: the runner knows a kept job by its address).
  std::optional<RunnerJob> kept;

  // What batch `b` fetches: its node outputs, and with the last batch every
  // graph output.
  std::vector<std::string> Fetch(size_t b) const {
    std::vector<std::string> fetch;
    for (const auto& name : batches[b])
      if (!graph_inputs.contains(name)) fetch.push_back(name);
    if (b + 1 == batches.size())
      for (const auto& name : outputs)
        if (std::find(fetch.begin(), fetch.end(), name) == fetch.end()) fetch.push_back(name);
    return fetch;
  }

  // Runs one batch. The tensors are ORT's own buffers (no copy of a trace's
  // every tensor); a batch's own session lives as long as they do.
  Result<TensorSet> RunBatch(const Sample& sample, const std::vector<std::string>& fetch) {
    RunnerJob job = kept ? *kept : RunnerJob{.model = label, .loaded = &model, .names = fetch};
    job.buffers = ort::OutputBuffers::kBorrowed;
    job.sample = sample.name;
    return runner->Run(job, sample.tensors);
  }
};

Tracer::Tracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tracer::Tracer(Tracer&&) noexcept = default;
Tracer& Tracer::operator=(Tracer&&) noexcept = default;
Tracer::~Tracer() = default;

Result<Tracer> Tracer::Create(const Model& model, const RunConfig& config, std::vector<std::string> tensors,
                              const std::string& label, TraceOptions options) {
  std::optional<GraphView> built;
  if (options.graph == nullptr) {
    PARITY_ASSIGN_OR_RETURN(built, WithContext(BuildGraphView(model), label));
  }
  const GraphView& g = options.graph != nullptr ? *options.graph : *built;
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->runner = MakeSessionRunner(config);
  impl->label = label;
  impl->outputs = g.outputs;
  impl->graph_inputs.insert(g.inputs.begin(), g.inputs.end());

  std::unordered_set<std::string> seen;
  for (const auto& name : tensors) {
    if (!seen.insert(name).second)
      return InvalidArgument(fmt::format("{}: tensor '{}' is observed twice", label, name));
    if (!g.producer.contains(name) && !impl->graph_inputs.contains(name))
      return NotFound(fmt::format("{}: no node produces tensor '{}'", label, name));
  }

  // Graph inputs are delivered from the sample; they cost no run memory.
  std::vector<std::optional<int64_t>> sizes = EstimateTensorBytes(g, tensors, options.input_shapes);
  int64_t largest = 0;
  for (const auto& s : sizes)
    if (s) largest = std::max(largest, *s);
  for (const auto& name : g.inputs)
    if (auto s = EstimateTensorBytes(g, {name}, options.input_shapes)[0]) largest = std::max(largest, *s);

  std::vector<std::string> current;
  int64_t current_bytes = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const int64_t bytes = impl->graph_inputs.contains(tensors[i]) ? 0 : sizes[i].value_or(largest);
    if (options.max_batch_bytes > 0 && !current.empty() && current_bytes + bytes > options.max_batch_bytes) {
      impl->batches.push_back(std::move(current));
      impl->batch_bytes.push_back(current_bytes);
      current.clear();
      current_bytes = 0;
    }
    current.push_back(tensors[i]);
    current_bytes += bytes;
  }
  if (!current.empty() || impl->batches.empty()) {
    impl->batches.push_back(std::move(current));
    impl->batch_bytes.push_back(current_bytes);
  }

  if (impl->batches.size() == 1) {
    // The runner exposes the tensors on bytes ORT parses: the model's own
    // file (or its serialization) with the extra outputs appended
    // (session_run.h ExposedSource), not a clone of the parsed model
    // serialized again: one copy of the weights fewer (gpt2_small: 2.1 GB
    // peak, 4.3x its weights, in `baseline`). Every tensor an output, run
    // once per sample: no CPU arena to grow and hold (the runner's default).
    impl->kept = RunnerJob{.model = label, .loaded = &model, .names = impl->Fetch(0), .keep_session = true};
    PARITY_RETURN_IF_ERROR(impl->runner->Prepare(*impl->kept));
  } else {
    impl->model = model.Clone();
  }
  return Tracer(std::move(impl));
}

Result<TensorSet> Tracer::TraceBatches(const Sample& sample, const BatchSink& sink) {
  Impl& s = *impl_;
  const std::unordered_set<std::string> output_set(s.outputs.begin(), s.outputs.end());
  std::unordered_set<std::string> outputs_delivered;  // graph outputs among the observed tensors
  TensorSet model_outputs;
  for (size_t b = 0; b < s.batches.size(); ++b) {
    const bool last = b + 1 == s.batches.size();
    const std::vector<std::string> fetch = s.Fetch(b);  // the graph outputs come with the last run

    TensorSet got;
    if (!fetch.empty()) {
      PARITY_ASSIGN_OR_RETURN(got, s.RunBatch(sample, fetch));
    }
    std::vector<NamedTensor> delivered;
    for (const auto& name : s.batches[b]) {
      const Tensor* t = s.graph_inputs.contains(name) ? sample.tensors.Find(name) : got.Find(name);
      if (t == nullptr)
        return InvalidArgument(fmt::format("{}, sample '{}': input '{}' is missing", s.label, sample.name, name));
      delivered.push_back({name, *t});
      if (output_set.contains(name)) outputs_delivered.insert(name);
    }
    if (last)
      for (const auto& name : s.outputs) {
        const Tensor* t = got.Find(name);
        if (t == nullptr) return InternalError(fmt::format("{}: output '{}' was not fetched", s.label, name));
        if (!outputs_delivered.contains(name)) delivered.push_back({name, *t});
      }
    PARITY_RETURN_IF_ERROR(sink(delivered));
    // The last run fetches every graph output: returned in model order,
    // whatever order the observed list had, copied out of ORT's buffers so
    // that what is returned holds no session.
    if (last)
      for (const auto& name : s.outputs) model_outputs.Set(name, got.Find(name)->Copy());
    // `got` and `delivered` go out of scope here: the batch's tensors (and
    // a batch's own session) are released before the next run.
  }
  return model_outputs;
}

Result<TensorSet> Tracer::Trace(const Sample& sample, const TensorSink& sink) {
  return TraceBatches(sample, [&](const std::vector<NamedTensor>& batch) -> Status {
    for (const auto& [name, value] : batch) PARITY_RETURN_IF_ERROR(sink(name, value));
    return {};
  });
}

const std::vector<std::vector<std::string>>& Tracer::batches() const { return impl_->batches; }
const std::vector<int64_t>& Tracer::batch_bytes() const { return impl_->batch_bytes; }
const std::vector<std::string>& Tracer::output_names() const { return impl_->outputs; }

}  // namespace parity
