// Traced runs (docs/contract.md (""trace"")): a model run under one config while a chosen
// list of its tensors is observed, in batches bounded by memory, each tensor
// (or each batch, TraceBatches) handed to a sink as it arrives so that callers
// (baseline, verify) compare or write them and never hold a whole trace.
//
//   auto tracer = Tracer::Create(model, config, observed, path, {.max_batch_bytes = 256 << 20});
//   auto outputs = tracer->Trace(sample, [&](const std::string& name, const Tensor& t) -> Status {
//     return WriteNpy(dir / (name + ".npy"), t);
//   });
//
// Batching. Each observed tensor's size is estimated from the model's types
// (ONNX shape inference); symbolic dims are resolved from
// TraceOptions::input_shapes where a graph input declares the same symbol;
// a tensor whose size stays unknown counts as the largest known tensor (or
// input), which is conservative for the CNNs and transformers parity meets.
// Tensors are cut, in the given order, into consecutive batches whose
// estimated bytes stay within max_batch_bytes (a tensor larger than the limit
// gets a batch of its own). Each batch is one run of the model with exactly
// that batch's tensors exposed as extra outputs (onnx/edit.h
// WithExtraOutputs), and its tensors are released before the next run.
//
// Sessions. With a single batch the session (the model with every observed
// tensor exposed) is created once and reused for every sample. With several
// batches, each batch's session is created for its run and destroyed after
// it: ORT's CPU arena keeps the peak of every run of a session until the
// session dies, so keeping one live session per batch would hold every
// batch's memory at once and defeat the bound. That costs one session
// creation per batch and sample, the price of bounded memory.
//
// Memory of one batch run, roughly: ORT's arena (the batch's outputs plus the
// run's working tensors, grown in power-of-two chunks); the sink gets ORT's
// buffers themselves, not copies. Callers budgeting a total should subtract what
// the process already holds and one run's own cost first, and give about a
// third of the rest (baseline.h PlanBaselineMemory).
//
// Thread-compatible: one Trace at a time per Tracer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "onnx/graph.h"
#include "onnx/model.h"
#include "ort/session.h"

namespace parity {

struct TraceOptions {
  // Upper bound on the estimated bytes of one batch's observed tensors;
  // 0: everything in one batch.
  int64_t max_batch_bytes = 0;
  // Shapes of the inputs the tracer will be run on, to resolve symbolic dims
  // when planning batches (usually the first sample's). Optional.
  std::map<std::string, Shape> input_shapes;
  // The model's graph view with its inferred types (BuildGraphView's
  // default), when the caller has one already: not built again. It must be
  // of the model given to Create, and outlive Create (not the Tracer).
  const GraphView* graph = nullptr;
};

// Called once per observed tensor, in the order given to Tracer::Create, then
// once per graph output that was not among them. The tensor is only valid
// during the call (the tracer releases it afterwards). An error stops the
// trace and is returned by Trace.
using TensorSink = std::function<Status(const std::string& name, const Tensor& value)>;

// Called once per batch with that batch's tensors in delivery order (the
// last batch's followed by the graph outputs not observed), so that a caller
// may work on them together (write them on several threads). They are valid
// during the call only: they are ORT's own buffers, released with the batch
// (a copy kept past the call keeps the batch's session alive with it). An
// error stops the trace and is returned by TraceBatches.
using BatchSink = std::function<Status(const std::vector<NamedTensor>& batch)>;

class Tracer {
 public:
  // `tensors`: node outputs (or graph inputs) to observe, in the order they
  // should arrive (topological). Graph outputs may be among them.
  // Errors: kNotFound naming a tensor that is neither produced by a node nor
  // a graph input; kInvalidArgument for a repeated name; the model's and
  // session's errors (with `label` as context) when the single-batch session
  // cannot be created.
  static Result<Tracer> Create(const Model& model, const RunConfig& config, std::vector<std::string> tensors,
                               const std::string& label, TraceOptions options = {});

  Tracer(Tracer&&) noexcept;
  Tracer& operator=(Tracer&&) noexcept;
  ~Tracer();

  // Runs `sample` once per batch and calls sink(name, value) for each observed
  // tensor in order, then for the graph outputs not observed. Returns the
  // model's outputs (in model order). Errors: the run's (naming the sample and
  // label), or the sink's.
  Result<TensorSet> Trace(const Sample& sample, const TensorSink& sink);
  // The same run, each batch handed over whole.
  Result<TensorSet> TraceBatches(const Sample& sample, const BatchSink& sink);

  // The planned batches, in run order; their concatenation is the observed list.
  const std::vector<std::vector<std::string>>& batches() const;
  // Estimated bytes of each batch (same order as batches()).
  const std::vector<int64_t>& batch_bytes() const;
  // The model's graph output names, in order.
  const std::vector<std::string>& output_names() const;

 private:
  struct Impl;
  explicit Tracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Estimated bytes of each of `tensors` in `model` (see "Batching" above):
// nullopt where the size stays unknown. Exposed for tests and planning.
std::vector<std::optional<int64_t>> EstimateTensorBytes(const Model& model, const std::vector<std::string>& tensors,
                                                        const std::map<std::string, Shape>& input_shapes);
// The same from the model's graph view (with inferred types).
std::vector<std::optional<int64_t>> EstimateTensorBytes(const GraphView& graph, const std::vector<std::string>& tensors,
                                                        const std::map<std::string, Shape>& input_shapes);

}  // namespace parity
