#include "engine/alignment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "compare/metrics.h"
#include "onnx/graph.h"

namespace parity {
namespace {

bool IsNumeric(std::string_view atom) {
  return !atom.empty() && std::all_of(atom.begin(), atom.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The graph with what alignment asks of it precomputed.
struct IndexedGraph {
  GraphView graph;
  std::vector<IntermediateTensor> tensors;           // topological order
  std::unordered_map<std::string, size_t> position;  // tensor -> index in tensors
};

class Aligner {
 public:
  Aligner(const TorchDump& dump, const IndexedGraph& g, const TensorSet& values, const AlignOptions& options)
      : dump_(dump), g_(g), options_(options) {
    for (const auto& item : values) values_[item.name] = &item.tensor;
    for (const auto& layer : dump.layers) called_.insert(layer.module);
  }

  std::string Scope(const TorchLayer& layer) const {
    return TorchScopeName(layer.module, layer.call, &called_);
  }

  Result<std::vector<LayerAlignment>> Run() {
    std::vector<LayerAlignment> out;
    for (size_t i = 0; i < dump_.layers.size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(Tensor t, LoadLayer(dump_, dump_.layers[i]));
      out.push_back(AlignLayer(i, t));
    }
    return out;
  }

 private:
  const Tensor* Value(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : it->second;
  }

  bool Agrees(const LayerAlignment& a, const Tensor& dumped, const std::string& tensor) const {
    const Tensor* v = Value(tensor);
    return v != nullptr && ValuesAgree(a.module, dumped, *v, options_.policy);
  }

  bool SameShape(const Tensor& dumped, const std::string& tensor) const {
    const Tensor* v = Value(tensor);
    return v == nullptr || v->shape() == dumped.shape();
  }

  void Set(LayerAlignment& a, const std::string& tensor, AlignHow how, bool agree) {
    a.tensor = tensor;
    a.how = how;
    a.values_agree = agree;
    if (auto it = g_.graph.producer.find(tensor); it != g_.graph.producer.end()) {
      a.node = g_.graph.nodes[it->second].name;
      a.op_type = g_.graph.nodes[it->second].op_type;
    }
    if (auto it = g_.position.find(tensor); it != g_.position.end()) anchor_ = static_cast<long>(it->second);
  }

  std::vector<size_t> NodesInScope(const std::string& scope) const {
    const std::string prefix = scope + "/";
    std::vector<size_t> nodes;
    for (size_t n = 0; n < g_.graph.nodes.size(); ++n)
      if (g_.graph.nodes[n].name.starts_with(prefix)) nodes.push_back(n);
    return nodes;
  }

  // Outputs of the scope's nodes that a node outside the scope reads, or that
  // are graph outputs; topological order.
  std::vector<std::string> Escaping(const std::vector<size_t>& nodes, const std::string& scope) const {
    const std::string prefix = scope + "/";
    std::vector<std::string> out;
    for (size_t n : nodes) {
      for (const std::string& t : g_.graph.nodes[n].outputs) {
        if (t.empty()) continue;
        bool escapes =
            std::find(g_.graph.outputs.begin(), g_.graph.outputs.end(), t) != g_.graph.outputs.end();
        if (auto it = g_.graph.consumers.find(t); !escapes && it != g_.graph.consumers.end())
          for (size_t c : it->second) escapes = escapes || !g_.graph.nodes[c].name.starts_with(prefix);
        if (escapes) out.push_back(t);
      }
    }
    return out;
  }

  // How many tensors call `layer.call` of the module returned.
  size_t OutputsOfCall(const TorchLayer& layer) const {
    return std::count_if(dump_.layers.begin(), dump_.layers.end(), [&](const TorchLayer& l) {
      return l.module == layer.module && l.call == layer.call;
    });
  }

  std::string NameCandidate(const std::vector<std::string>& escaping, const TorchLayer& layer,
                            const Tensor& dumped) const {
    std::vector<std::string> same;
    for (const auto& t : escaping)
      if (SameShape(dumped, t)) same.push_back(t);
    if (same.empty()) return escaping.empty() ? "" : escaping.back();
    if (layer.output_index && same.size() == OutputsOfCall(layer) &&
        *layer.output_index < static_cast<int64_t>(same.size()))
      return same[*layer.output_index];
    return same.back();
  }

  // Tensors of the dump's shape, nearest first to the anchor (forward before
  // backward), within the window; the first that agrees.
  std::optional<std::string> SearchByValue(const LayerAlignment& a, const Tensor& dumped,
                                           const std::string& skip) const {
    const long n = static_cast<long>(g_.tensors.size());
    const long start = std::max(anchor_, 0L);
    for (long d = 0; d <= options_.search_window; ++d) {
      const long forward = start + d, backward = start - d;
      if (forward >= n && backward < 0) break;
      for (long pos : {forward, backward}) {
        if (pos < 0 || pos >= n) continue;
        const std::string& name = g_.tensors[pos].name;
        const Tensor* v = Value(name);
        if (name == skip || v == nullptr || v->shape() != dumped.shape()) continue;
        if (ValuesAgree(a.module, dumped, *v, options_.policy)) return name;
        if (d == 0) break;  // forward and backward are the same position
      }
    }
    return std::nullopt;
  }

  // A later layer with no node of its own whose dump equals `tensor`: the
  // exporter folded it into the node computing `tensor` (a BatchNorm after a
  // Conv). Without a value match (values diverge downstream of a fault), the
  // structure alone decides for the layer right after: a BatchNorm with no
  // node after a module whose output comes from a Conv.
  struct Fold {
    size_t layer;
    bool by_value;
  };
  std::optional<Fold> FoldedInto(size_t i, const std::string& tensor) const {
    const Tensor* v = Value(tensor);
    if (v == nullptr) return std::nullopt;
    for (size_t j = i + 1; j < dump_.layers.size() && j <= i + 2; ++j) {
      const TorchLayer& later = dump_.layers[j];
      if (later.shape != v->shape() || !NodesInScope(Scope(later)).empty()) continue;
      auto t = LoadLayer(dump_, later);
      if (t && ValuesAgree(later.module, *t, *v, options_.policy)) return Fold{j, true};
    }
    if (i + 1 >= dump_.layers.size()) return std::nullopt;
    const TorchLayer& next = dump_.layers[i + 1];
    auto producer = g_.graph.producer.find(tensor);
    if (next.type.starts_with("BatchNorm") && next.shape == v->shape() && NodesInScope(Scope(next)).empty() &&
        producer != g_.graph.producer.end() && g_.graph.nodes[producer->second].op_type == "Conv")
      return Fold{i + 1, false};
    return std::nullopt;
  }

  LayerAlignment AlignLayer(size_t i, const Tensor& dumped);

  const TorchDump& dump_;
  const IndexedGraph& g_;
  const AlignOptions& options_;
  std::unordered_map<std::string, const Tensor*> values_;
  std::unordered_set<std::string> called_;  // modules the dump saw called
  struct Folded {
    std::string tensor;
    size_t into;  // the layer whose node computes it
  };
  std::map<size_t, Folded> folded_;  // later layer -> where it was folded
  long anchor_ = -1;                 // position of the last aligned tensor
};

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
  a.scope = Scope(layer);

  if (auto it = folded_.find(i); it != folded_.end()) {
    const bool agree = Agrees(a, dumped, it->second.tensor);
    Set(a, it->second.tensor, agree ? AlignHow::kValue : AlignHow::kName, agree);
    a.reason = agree ? fmt::format(
                           "no node of its own: folded into node '{}' of '{}', whose output equals this "
                           "module's",
                           a.node, dump_.layers[it->second.into].module)
                     : fmt::format(
                           "no node of its own: by structure, folded into node '{}' of '{}' (a BatchNorm "
                           "after a Conv); values disagree",
                           a.node, dump_.layers[it->second.into].module);
    return a;
  }

  const std::vector<size_t> nodes = NodesInScope(a.scope);
  if (nodes.empty()) {
    if (auto found = SearchByValue(a, dumped, "")) {
      Set(a, *found, AlignHow::kValue, true);
      a.reason = fmt::format(
          "no node in scope '{}' (a no-op such as Dropout in eval, or inlined); "
          "its output equals this tensor",
          a.scope);
    } else {
      a.reason = fmt::format(
          "no node in scope '{}': inlined, constant-folded or a no-op (e.g. Dropout in "
          "eval), and no tensor of shape {} near the expected position agrees with it",
          a.scope, ShapeToString(dumped.shape()));
    }
    return a;
  }

  const std::vector<std::string> escaping = Escaping(nodes, a.scope);
  const std::string candidate = NameCandidate(escaping, layer, dumped);
  if (candidate.empty()) {
    if (auto found = SearchByValue(a, dumped, "")) {
      Set(a, *found, AlignHow::kValue, true);
      a.reason = fmt::format("nothing computed in scope '{}' is used outside it; found by value", a.scope);
    } else {
      a.reason = fmt::format(
          "nothing computed in scope '{}' is used outside it, and no tensor agrees by value", a.scope);
    }
    return a;
  }
  if (Value(candidate) == nullptr) {
    Set(a, candidate, AlignHow::kName, false);
    a.reason = "not verified by value: the tensor was not observed";
    return a;
  }
  if (Agrees(a, dumped, candidate)) {
    Set(a, candidate, AlignHow::kName, true);
    return a;
  }

  // The scope's output disagrees. Another tensor of the scope?
  for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) {
    for (const std::string& t : g_.graph.nodes[*n].outputs) {
      if (t.empty() || t == candidate || !Agrees(a, dumped, t)) continue;
      Set(a, t, AlignHow::kName, true);
      a.reason = fmt::format("the scope's output '{}' disagrees; '{}' inside the scope agrees", candidate, t);
      return a;
    }
  }
  // A BatchNorm (or other no-node module) folded into this module's node?
  if (auto fold = FoldedInto(i, candidate)) {
    const TorchLayer& later = dump_.layers[fold->layer];
    const auto producer = g_.graph.producer.find(candidate);
    const std::string node =
        producer == g_.graph.producer.end() ? candidate : g_.graph.nodes[producer->second].name;
    a.reason = fold->by_value
                   ? fmt::format(
                         "folded into a neighbour: node '{}' computes it together with {} '{}' (its output "
                         "equals that module's dump, as after folding a BatchNorm into a Conv)",
                         node, later.type, later.module)
                   : fmt::format(
                         "folded into a neighbour: node '{}' computes it together with {} '{}' (by "
                         "structure: a BatchNorm with no node of its own right after it)",
                         node, later.type, later.module);
    folded_[fold->layer] = {candidate, i};
    return a;
  }
  if (auto found = SearchByValue(a, dumped, candidate)) {
    Set(a, *found, AlignHow::kValue, true);
    a.reason = fmt::format("found by value: its scope's output '{}' disagrees with the dump", candidate);
    return a;
  }
  if (!SameShape(dumped, candidate)) {
    a.reason =
        fmt::format("shape mismatch: its scope's output '{}' is {} but the module returned {}", candidate,
                    ShapeToString(Value(candidate)->shape()), ShapeToString(dumped.shape()));
    return a;
  }
  // Aligned by name, values diverge: torch_compare reports it.
  Set(a, candidate, AlignHow::kName, false);
  return a;
}

}  // namespace

std::string_view AlignHowName(AlignHow how) {
  switch (how) {
    case AlignHow::kName:
      return "name";
    case AlignHow::kValue:
      return "value";
    case AlignHow::kNone:
      return "none";
  }
  return "none";
}

std::string TorchScopeName(std::string_view module_path, int64_t call,
                           const std::unordered_set<std::string>* called) {
  std::vector<std::string_view> atoms;
  size_t begin = 0;
  while (true) {
    const size_t dot = module_path.find('.', begin);
    atoms.push_back(
        module_path.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    if (dot == std::string_view::npos) break;
    begin = dot + 1;
  }
  std::string scope;
  for (size_t end = 0; end < atoms.size(); ++end) {
    if (called != nullptr && end + 1 < atoms.size() &&
        !called->contains(
            std::string(module_path.substr(0, atoms[end].data() + atoms[end].size() - module_path.data()))))
      continue;
    // torch's _unqualified_variable_name: the qualified name from its last
    // non-numeric atom on (all of it when every atom is numeric).
    size_t first = 0;
    for (size_t k = end + 1; k-- > 0;) {
      if (!IsNumeric(atoms[k])) {
        first = k;
        break;
      }
    }
    scope += '/';
    for (size_t k = first; k <= end; ++k) {
      if (k > first) scope += '.';
      scope += atoms[k];
    }
  }
  if (call > 0) scope += fmt::format("_{}", call);
  return scope;
}

bool ValuesAgree(std::string_view name, const Tensor& ref, const Tensor& test,
                 const TolerancePolicy& policy) {
  if (ref.shape() != test.shape() || ref.dtype() == DType::kString || test.dtype() == DType::kString)
    return false;
  const ResolvedTolerance tol = Resolve(name, ref, policy);
  // The value search tries many candidates that disagree everywhere: for the
  // element-wise decision, a few sampled elements outside the band already
  // settle it without the full pass.
  if (tol.tolerance.decide_by == Statistic::kElementwise && ref.size() > 4096) {
    const int64_t stride = ref.size() / 64;
    for (int64_t k = 0; k < ref.size(); k += stride) {
      const double r = ref.GetAsDouble(k), t = test.GetAsDouble(k);
      if (std::isnan(r) || std::isnan(t) || std::isinf(r) || std::isinf(t))
        continue;  // the full pass decides
      if (std::fabs(t - r) > tol.tolerance.atol + tol.tolerance.rtol * std::fabs(r)) return false;
    }
  }
  auto m = ComputeMetrics(ref, test, {.atol = tol.tolerance.atol, .rtol = tol.tolerance.rtol, .threads = 1});
  return m && Judge(*m, tol.tolerance).empty();
}

Result<std::vector<LayerAlignment>> Align(const TorchDump& dump, const Model& onnx_model,
                                          const TensorSet& onnx_values, const AlignOptions& options) {
  IndexedGraph g;
  GraphViewOptions view;
  view.infer_shapes = false;  // shapes come from the values
  PARITY_ASSIGN_OR_RETURN(g.graph, BuildGraphView(onnx_model, view));
  g.tensors = IntermediateTensors(g.graph);
  for (size_t p = 0; p < g.tensors.size(); ++p) g.position.emplace(g.tensors[p].name, p);
  return Aligner(dump, g, onnx_values, options).Run();
}

}  // namespace parity
