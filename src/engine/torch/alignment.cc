#include "engine/torch/alignment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "compare/judge.h"
#include "compare/metrics.h"
#include "engine/torch/aligner.h"
#include "engine/torch/torch_scope.h"
#include "onnx/graph.h"

namespace parity {
namespace alignment_internal {

// How layer i of the dump is aligned: by the nodes its call owns (scope or
// name), else by value near the last aligned tensor, else not at all (why).
LayerAlignment Aligner::AlignLayer(size_t i, const Tensor& dumped) {
  const TorchLayer& layer = dump_.layers[i];
  LayerAlignment a;
  a.layer = i;
  a.module = layer.module;
  a.file = layer.file;
  a.type = layer.type;
  a.call = layer.call;
  a.output_index = layer.output_index;
  a.leaf = dump_.IsLeaf(i);
  a.scope = layer.call > 0 ? fmt::format("{} (call {})", layer.module, layer.call) : layer.module;

  if (auto it = folded_bn_.find(i);
      it != folded_bn_.end() && !it->second.empty() && OwnedBy(layer) == nullptr) {
    // TorchScript: the BatchNorm has no node; the fused Conv node computes it.
    Set(a, it->second, StructuralHow(), Agrees(a.module, dumped, it->second));
    a.reason = fmt::format("eval BatchNorm folded into the Conv node '{}' before it", a.node);
    return a;
  }

  const std::vector<size_t>* nodes = OwnedBy(layer);
  const std::vector<std::string> escaping = nodes ? Escaping(*nodes) : std::vector<std::string>{};
  const std::vector<std::string> same = OfShape(escaping, layer.shape);
  const std::string candidate = OutputCandidate(same, layer);

  if (!IsBatchNormType(layer.type) && Fold(i, nodes, candidate, a)) return a;

  if (nodes == nullptr) {
    AlignWithoutNodes(i, dumped, a);
    return a;
  }
  if (candidate.empty() && layer.output_index && !same.empty()) {
    AlignTupleElement(i, dumped, same, a);
    return a;
  }
  if (candidate.empty()) {
    const std::vector<std::string> outputs = OutputsOf(*nodes);
    const Search search = SearchByValue(a, dumped, &outputs);
    if (search.found) {
      Set(a, *search.found, AlignHow::kValue, true);
      a.reason = fmt::format(
          "no tensor of shape {} leaves the module's {} node(s); found by value among them",
          ShapeToString(dumped.shape()), nodes->size());
    } else {
      a.expected = true;  // its call computed something
      a.reason = escaping.empty()
                     ? fmt::format("nothing the module's {} node(s) compute is used outside them", nodes->size())
                     : fmt::format("shape mismatch: no tensor leaving the module's {} node(s) has shape {}",
                                   nodes->size(), ShapeToString(dumped.shape()));
      Refuse(search, a, dumped);
    }
    return a;
  }
  // Placed by structure: kept whatever the values say (a divergence is
  // judged by torch_compare.h, never hidden by a search elsewhere).
  const bool observed = Value(candidate) != nullptr;
  Set(a, candidate, StructuralHow(), observed && Agrees(a.module, dumped, candidate));
  a.entering = Entering(*nodes);
  if (auto it = fused_conv_of_.find(i); it != fused_conv_of_.end()) a.entering_of = it->second;
  if (!observed) a.reason = "not verified by value: the tensor was not observed";
  return a;
}

// Whether layer i is a Conv the export folded with the eval BatchNorm after
// it (FoldingBatchNorm); then `a` says so and where the fused node lies.
bool Aligner::Fold(size_t i, const std::vector<size_t>* nodes, const std::string& candidate, LayerAlignment& a) {
  const std::optional<size_t> bn = FoldingBatchNorm(i, nodes, candidate);
  if (!bn) return false;
  const TorchLayer& b = dump_.layers[*bn];
  a.folded = true;
  if (OwnsOp(OwnedBy(b), "Conv")) {  // dynamo: the fused node carries the BatchNorm's scope
    last_tensor_ = FusedConvOutput(*bn);
    fused_conv_of_[*bn] = i;
    a.reason = fmt::format(
        "folded: the export fused its last Conv with the eval {} '{}' after it; the fused node carries "
        "that module's scope, and this module's own output does not exist",
        b.type, b.module);
  } else {  // TorchScript: the fused node carries the Conv's name
    folded_bn_[*bn] = candidate;
    last_tensor_ = candidate;
    a.reason = fmt::format(
        "folded: the export fused its Conv with the eval {} '{}' after it (node '{}' computes both), so "
        "this module's own output does not exist",
        b.type, b.module, g_.graph.Producer(candidate) ? g_.graph.Producer(candidate)->name : candidate);
  }
  return true;
}

// Element k of a tuple whose call hands fewer (or more) tensors of its shape
// to the rest of the graph than it returned elements of that shape: an
// element the caller never used was dropped by the export, and the tensor
// that shape alone would pick is a sibling's. By value among those tensors;
// when none agrees and each is a sibling's, the element was not used.
void Aligner::AlignTupleElement(size_t i, const Tensor& dumped, const std::vector<std::string>& same,
                                LayerAlignment& a) {
  const TorchLayer& layer = dump_.layers[i];
  const std::vector<int64_t> elements = ElementsOfShape(layer);
  const Search search = SearchByValue(a, dumped, &same);
  const std::string counts = fmt::format("{} tensor(s) of shape {} leave the call for its {} elements of that shape",
                                         same.size(), ShapeToString(dumped.shape()), elements.size());
  if (search.found) {
    Set(a, *search.found, AlignHow::kValue, true);
    a.reason = counts + ": placed by value, not by shape alone";
    return;
  }
  // Each tensor that leaves is one of the call's other elements: this one is unused.
  bool siblings = true;
  for (const std::string& t : same) {
    bool sibling = false;
    for (size_t j = 0; j < dump_.layers.size() && !sibling; ++j) {
      const TorchLayer& l = dump_.layers[j];
      if (j == i || l.module != layer.module || l.call != layer.call || l.shape != layer.shape) continue;
      auto other = LoadLayer(dump_, l);
      sibling = other && Agrees(l.module, *other, t);
    }
    siblings = siblings && sibling;
  }
  if (siblings) {
    a.reason = counts + ", each another element's: this one is not used outside the module (the export dropped it)";
    return;
  }
  a.expected = true;
  a.reason = counts + ", and none agrees with this element";
  Refuse(search, a, dumped);
}

// Marks a layer the value search refused: tensors of its shape were there
// and none agreed (see LayerAlignment::refused).
void Aligner::Refuse(const Search& search, LayerAlignment& a, const Tensor& dumped) const {
  if (search.tried == 0) return;
  a.refused = a.expected = true;
  a.nearest = search.first_tried;
  std::string error;
  if (const Tensor* v = Value(search.first_tried))
    if (auto j = JudgeTensor(a.module, dumped, *v, options_.policy, {.threads = 1}))
      error = fmt::format(", max_abs {:.3g}", j->metrics.max_abs);
  a.reason += fmt::format("; value alignment refused it: {} tensor(s) of its shape disagree with it (the first, '{}'{})",
                          search.tried, search.first_tried, error);
}

// What value alignment refused but the export explains, once every layer
// is placed: a Conv left unaligned in an export aligned by value (no scopes
// to fold by) whose BatchNorm after it found the tensor holding its output
// was folded into it, as by structure; a tuple element no tensor holds while
// a sibling element agrees was not used by the caller, and the export
// dropped it (a divergence in a used element shows in the layers it feeds).
void Aligner::Settle() {
  for (LayerAlignment& a : out_) {
    if (!a.refused || !a.output_index) continue;
    auto sibling = std::find_if(out_.begin(), out_.end(), [&](const LayerAlignment& s) {
      return s.module == a.module && s.call == a.call && s.output_index != a.output_index && s.values_agree;
    });
    if (sibling == out_.end()) continue;
    a.refused = a.expected = false;
    a.reason += fmt::format(
        "; but its sibling element {} agrees with '{}': the caller did not use this one, and the export dropped it",
        sibling->output_index ? fmt::format("[out {}]", *sibling->output_index) : "", sibling->tensor);
  }
  for (size_t i = 0; i < out_.size(); ++i) {
    LayerAlignment& a = out_[i];
    if (!a.tensor.empty() || a.folded || !IsConvType(a.type)) continue;
    const std::optional<size_t> j = NextBatchNorm(i);
    if (!j || out_[*j].tensor.empty() || !out_[*j].values_agree || ByStructure(out_[*j].how)) continue;
    a.folded = true;
    a.refused = a.expected = false;
    a.nearest.clear();
    a.reason = fmt::format(
        "folded: no tensor holds its own output, and the eval {} '{}' after it agrees with '{}': the export fused "
        "them (told by value; the export's scopes do not name this module)",
        out_[*j].type, out_[*j].module, out_[*j].tensor);
  }
}

// A module call with no node of its own.
void Aligner::AlignWithoutNodes(size_t i, const Tensor& dumped, LayerAlignment& a) {
  const TorchLayer& layer = dump_.layers[i];
  const std::optional<std::string> path = paths_.ToExport(layer.module);
  // A dynamo module whose calls could not be told apart: its own nodes, by value.
  if (auto it = path ? ambiguous_.find(*path) : ambiguous_.end(); it != ambiguous_.end()) {
    const std::vector<std::string> outputs = OutputsOf(it->second);
    Search search = SearchByValue(a, dumped, &outputs);
    if (search.found) {
      Set(a, *search.found, AlignHow::kValue, true);
      a.reason = fmt::format(
          "called {} times, and the export's scopes do not separate the calls: found by value among the "
          "module's {} node(s)",
          calls_.at(*path), it->second.size());
      return;
    }
    // One module instance called from several places (Ultralytics' Conv
    // shares one SiLU): the export scopes the other calls elsewhere.
    const Search near = SearchByValue(a, dumped);
    if (near.found) {
      Set(a, *near.found, AlignHow::kValue, true);
      a.reason = fmt::format(
          "called {} times, and the export's scopes do not separate the calls; no node of the module agrees, "
          "found by value near its place",
          calls_.at(*path));
      return;
    }
    a.expected = true;
    a.reason = fmt::format(
        "called {} times, and the export's scopes do not separate the calls; no node of the module, and no "
        "tensor near its place, agrees",
        calls_.at(*path));
    Refuse(search.tried ? search : near, a, dumped);
    return;
  }
  // Dropout/Identity in eval and the like: the output is the input, which
  // the layer before left in `last_tensor_`.
  if (!last_tensor_.empty() && Agrees(a.module, dumped, last_tensor_)) {
    Set(a, last_tensor_, source_ == ScopeSource::kNone ? AlignHow::kValue : StructuralHow(), true);
    a.reason = fmt::format("no node of its own ({} in eval passes its input on): the tensor before it", a.type);
    return;
  }
  const Search search = SearchByValue(a, dumped);
  if (search.found) {
    Set(a, *search.found, AlignHow::kValue, true);
    a.reason = source_ == ScopeSource::kNone
                   ? "the export records no module scopes; found by value"
                   : "no node in its scope (inlined, constant-folded or a no-op); found by value";
    return;
  }
  a.reason = fmt::format(
      "no node in its scope (inlined, constant-folded or a no-op such as Dropout in eval), and no tensor of "
      "shape {} near the expected position agrees with it",
      ShapeToString(dumped.shape()));
  Refuse(search, a, dumped);
}

}  // namespace alignment_internal

std::string_view AlignHowName(AlignHow how) {
  switch (how) {
    case AlignHow::kScope:
      return "scope";
    case AlignHow::kName:
      return "name";
    case AlignHow::kValue:
      return "value";
    case AlignHow::kNone:
      return "none";
  }
  return "none";
}

bool ValuesAgree(std::string_view name, const Tensor& ref, const Tensor& test,
                 const TolerancePolicy& policy) {
  if (ref.shape() != test.shape() || ref.dtype() == DType::kString || test.dtype() == DType::kString)
    return false;
  const ResolvedTolerance tol = Resolve(name, ref, policy, nullptr, test.dtype());  // as JudgeTensor resolves it
  // The value search tries many candidates that disagree everywhere: for the
  // element-wise decision, a few sampled elements outside the band already
  // settle it without the full pass.
  if (tol.tolerance.decide_by == Statistic::kElementwise && ref.size() > 4096) {
    const int64_t stride = ref.size() / 64;
    for (int64_t k = 0; k < ref.size(); k += stride) {
      const double r = ref.GetAsDouble(k), t = test.GetAsDouble(k);
      if (std::isnan(r) || std::isnan(t) || std::isinf(r) || std::isinf(t))
        continue;  // the full pass decides
      if (std::fabs(t - r) > Band(tol.tolerance, std::fabs(r))) return false;
    }
  }
  auto judged = JudgeTensor(name, ref, test, policy, {.threads = 1});
  return judged && judged->passed();
}

Result<Alignment> Align(const TorchDump& dump, const Model& onnx_model, const TensorSet& onnx_values,
                        const AlignOptions& options) {
  alignment_internal::IndexedGraph g;
  GraphViewOptions view;
  view.infer_shapes = false;  // shapes come from the values
  PARITY_ASSIGN_OR_RETURN(g.graph, BuildGraphView(onnx_model, view));
  g.tensors = IntermediateTensors(g.graph);
  for (size_t p = 0; p < g.tensors.size(); ++p) g.position.emplace(g.tensors[p].name, p);
  return alignment_internal::Aligner(dump, g, onnx_values, options).Run();
}

}  // namespace parity
