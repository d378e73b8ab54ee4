// Judging an ONNX model against a PyTorch dump, layer by layer: the engine
// behind `parity align`, `parity locate --reference torch:DIR` and
// `parity check --torch DIR`.
//
// CompareWithTorch runs the model under `config` on the dump's inputs with
// every intermediate tensor observed, aligns the dump's layers with those
// tensors (alignment.h), and judges each aligned ONNX tensor against its
// PyTorch layer with the tolerance policy (resolved per module path). Layers
// without a counterpart are `unchecked`. The first divergent layer is the
// first that fails in the dump's execution order. Unchecked layers that
// value alignment refused (tensors of their shape disagree with them) could
// hide a divergence: the comparison does not pass while there are any.
//
// Memory: PyTorch layers are read one at a time, but the ONNX side holds
// every intermediate tensor of the one run at once (the value search needs
// random access); engine/run/trace.h's batched tracer is not used here yet.
//
// The result is plain data; report/json/torch_json.h writes it (the `alignment`
// entries of docs/contract.md ("Reports") and the first divergence).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compare/compare_sets.h"
#include "compare/metrics.h"
#include "compare/tolerance.h"
#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/torch/alignment.h"
#include "engine/torch/torch_dump.h"
#include "onnx/model.h"

namespace parity {

struct LayerVerdict {
  LayerAlignment alignment;
  Verdict status = Verdict::kUnchecked;
  std::string reason;     // why it failed; for unchecked, the alignment's reason
  TensorMetrics metrics;  // valid unless unchecked (ref: PyTorch, test: ONNX)
  ResolvedTolerance tolerance;
  double score = 0;       // the judge's (JudgedTensor::score); +inf for a shape that differs
  // Set on a layer outside its band by an isolated excursion only, which
  // then passes (layer_evidence.h); kept, and extended, when the failing
  // outputs make it the divergence after all.
  std::string note;
};

// The outputs differ from PyTorch but no aligned layer does: the fault lies
// in what alignment could not check, between the last layer that agrees and
// the failing outputs.
struct UnexplainedDivergence {
  std::string after_module;  // the last layer that agrees ("" when none does)
  std::vector<std::string> unchecked_modules;  // layers after it without a checked counterpart
  std::vector<std::string> failing_outputs;
  // "the outputs 'logits' differ from PyTorch, but no aligned layer does: ..."
  std::string Describe() const;
};

// The first failing layer's input already departs from what PyTorch passed
// it: the error comes from an op that no dumped submodule owns (a functional
// `x + y`, `F.relu`, a mask computation) of an enclosing module.
struct DivergentOp {
  std::string tensor;   // the departing input, as the ONNX graph names it
  std::string node;     // its producer
  std::string op_type;
  std::string module;   // the module whose own op it is ("" at the root)
  std::string feeds;    // the first failing layer, which reads it
  double max_abs = 0;   // against PyTorch's input of `feeds`
};

struct TorchComparison {
  std::string model_label;  // the model's path or label
  std::string dump_dir;
  ModulePathMap paths;  // how the dump's module paths were read against the export's scopes
  std::vector<LayerVerdict> layers;        // the dump's execution order
  std::optional<size_t> first_divergence;  // index into layers
  // The graph outputs compared with the dump's output_*.npy (by ONNX name).
  SetComparison outputs;

  // Set when first_divergence was moved from the first failing layer to the
  // enclosing module whose own op computes that layer's departing input.
  std::optional<DivergentOp> divergent_op;
  // Set when the outputs fail and first_divergence is not.
  std::optional<UnexplainedDivergence> unexplained;

  // Not while value alignment refused a layer that no agreeing layer
  // follows (Uncovered): a divergence could hide there.
  bool passed() const { return !first_divergence && outputs.passed() && Uncovered().empty(); }
  // Unchecked layers that should have an ONNX tensor (LayerAlignment::expected),
  // and those of them value alignment refused (LayerAlignment::refused).
  std::vector<size_t> UncheckedExpected() const;
  std::vector<size_t> Refused() const;
  // Of the refused layers, those no passing layer follows in the dump's
  // execution order (issue 50): where structure (scopes, names) placed the
  // other layers, a refused one is what structure could not place (a shared
  // SiLU module's call, an nn.Identity), and a divergence there that a later
  // layer agrees after did not propagate; one at the end could hide.
  // Without structure every refused layer is uncovered: value alignment's
  // refusals are then the only sign of a divergence.
  std::vector<size_t> Uncovered() const;
  // Counts over layers: aligned by scope / name / value / none; pass / fail.
  int Count(AlignHow how) const;
  int Count(Verdict v) const;
  int Folded() const;
  // Leaf layers with an ONNX counterpart, and how many of them by structure.
  int AlignedLeaves() const;
  int StructuralLeaves() const;
  // "71 layers: 60 by scope, 0 by name, 3 by value, 8 folded, 0 without an ONNX counterpart"
  std::string AlignmentLine() const;
  // The first divergence, or the unexplained one, or the refused layers
  // that could hide one, or that none was found, in one line for the console.
  std::string VerdictLine() const;
  // "2 layer(s) unchecked though they should have an ONNX tensor (1 refused
  // by value): 'a', 'b'"; "" when none.
  std::string UncheckedExpectedLine() const;

 private:
  std::string FirstDivergenceLine() const;  // VerdictLine without the refused layers
};

// Values of the observing run a caller keeps for later (check's layer
// curve reads the unfused reference's tensors from them instead of running
// the model once more): `names` asked for, `values` those the run observed,
// `inputs` what it was fed.
struct KeptValues {
  std::vector<std::string> names;
  TensorSet inputs;
  TensorSet values;
};

struct TorchCompareOptions {
  TolerancePolicy policy;  // judges the layers and decides alignment by value
  int search_window = 256;
  std::string label;  // names the model in errors and the report; default: its path
  // Non-null: filled with the values of keep->names (and the inputs) once the
  // run is judged; the rest of the run's values are released as before.
  KeptValues* keep = nullptr;
};

// Errors: the dump's inputs do not fit the model (names, dtypes, shapes), the
// session cannot be created or run, a dump file is unreadable or disagrees
// with its manifest, the policy is invalid.
Result<TorchComparison> CompareWithTorch(const Model& model, const TorchDump& dump,
                                         const RunConfig& onnx_config, const TorchCompareOptions& options);

// The dump's inputs under the model's input names: by name when every model
// input is in the dump, else by position when the counts agree (a dump
// named after the forward signature); invalid argument otherwise.
Result<TensorSet> InputsForModel(const TensorSet& dumped, const std::vector<std::string>& model_inputs,
                                 const std::string& dump_dir);

// The dump's layer an alignment names (its module, call and output index).
TorchLayer TorchLayerOf(const LayerAlignment& a);

// Judges an alignment made elsewhere against the given ONNX values (the
// pure part of CompareWithTorch, without ORT). Layer tensors are read one at
// a time. `conditioning`: each ONNX tensor's spread under inputs one ulp
// away (layer_evidence.h LayerSpread), flooring its layer's band.
Result<TorchComparison> JudgeAlignment(const TorchDump& dump, Alignment alignment, const TensorSet& onnx_values,
                                       const TolerancePolicy& policy, const TensorSet* conditioning = nullptr);

// The one fp64-calibration decision of a comparison against a dump's
// outputs (check --torch, locate --reference torch:DIR). With the default
// policy (scaled mode, no global atol) and a dump that holds float64 outputs,
// switches `options` to the calibrated mode with those outputs as the second
// reference (tolerance.h), kept in *fp64 (which must outlive `options`);
// otherwise leaves `options` as they are and returns OK.
// Errors: the dump lists float64 outputs that cannot be read (the error of
// LoadTorchOutputsFp64). A damaged dump is refused, as unreadable float32
// outputs are: parity never silently judges by another band than the one
// the dump asks for.
Status CalibrateOnTorchFp64(const TorchDump& dump, CompareOptions& options, TensorSet* fp64);
// The same for one sample of the dump (TorchDump::Samples): its own float64 outputs.
Status CalibrateOnTorchFp64(const TorchDump& dump, const TorchDumpSample& sample, CompareOptions& options,
                            TensorSet* fp64);

}  // namespace parity
