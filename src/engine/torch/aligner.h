// The aligner of dumped PyTorch layers to ONNX tensors (alignment.h): which
// nodes each module call owns, and the graph and value queries an alignment
// decision asks. Internal to engine/torch: alignment.cc decides each layer.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/torch/alignment.h"
#include "engine/torch/torch_scope.h"
#include "onnx/graph.h"

namespace parity::alignment_internal {

// The graph with what alignment asks of it precomputed.
struct IndexedGraph {
  GraphView graph;
  std::vector<IntermediateTensor> tensors;           // topological order
  std::unordered_map<std::string, size_t> position;  // tensor -> index in tensors
};

using CallKey = std::pair<std::string, int64_t>;  // module path, call

inline bool IsConvType(std::string_view type) { return type.starts_with("Conv") || type.find("Conv2d") != std::string_view::npos; }
inline bool IsBatchNormType(std::string_view type) { return type.find("BatchNorm") != std::string_view::npos; }

// Nodes that carry no scope and compute nothing a module returns: they do
// not separate two calls of a module.
inline bool IsNeutral(const GraphNode& n, const NodeScope& s) {
  return s.source == ScopeSource::kNone || n.op_type == "Constant";
}

class Aligner {
 public:
  Aligner(const TorchDump& dump, const IndexedGraph& g, const TensorSet& values, const AlignOptions& options)
      : dump_(dump), g_(g), options_(options) {
    for (const auto& item : values) values_[item.name] = &item.tensor;
    InferPaths();
    for (const auto& layer : dump.layers)
      if (auto path = paths_.ToExport(layer.module)) calls_[*path] = std::max(calls_[*path], layer.call + 1);
    BuildOwnership();
  }

  Result<Alignment> Run() {
    for (size_t i = 0; i < dump_.layers.size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(Tensor t, LoadLayer(dump_, dump_.layers[i]));
      out_.push_back(AlignLayer(i, t));
      if (!out_.back().tensor.empty()) last_tensor_ = out_.back().tensor;
    }
    Settle();
    return Alignment{std::move(out_), paths_};
  }

 private:
  // The scopes of every node, read under the module path map that makes most
  // dumped modules name one the export recorded (module_paths.h).
  void InferPaths() {
    std::vector<std::string> modules;
    for (const auto& layer : dump_.layers) modules.push_back(layer.module);
    const std::unordered_set<std::string> known(modules.begin(), modules.end());
    scopes_ = ScopesOf(g_.graph, known);
    paths_ = InferModulePathMap(modules, ExportModules());
    if (paths_.Identity()) return;
    // TorchScript's "relu_1" is told from call 1 of "relu" by the dump's
    // paths: read the names again with them in the export's terms.
    std::unordered_set<std::string> known_export;
    for (const auto& m : known)
      if (auto path = paths_.ToExport(m)) known_export.insert(*path);
    scopes_ = ScopesOf(g_.graph, known_export);
    const std::unordered_set<std::string> exported = ExportModules();
    paths_.in_export = static_cast<size_t>(std::count_if(known.begin(), known.end(), [&](const std::string& m) {
      auto path = paths_.ToExport(m);
      return path && exported.contains(*path);
    }));
  }

  std::unordered_set<std::string> ExportModules() const {
    std::unordered_set<std::string> out;
    for (const NodeScope& s : scopes_)
      for (const ScopeLevel& level : s.levels) out.insert(level.module);
    return out;
  }

  // The nodes of a dumped layer's call (null: none, or the module lies
  // outside what was exported).
  const std::vector<size_t>* OwnedBy(const TorchLayer& layer) const {
    auto path = paths_.ToExport(layer.module);
    return path ? Owned(*path, layer.call) : nullptr;
  }
  // Which nodes each module call owns (see alignment.h).
  void BuildOwnership() {
    std::map<std::string, std::vector<size_t>> dynamo;  // module -> nodes, calls unknown
    for (size_t n = 0; n < scopes_.size(); ++n) {
      const NodeScope& s = scopes_[n];
      if (s.source == ScopeSource::kMetadata) source_ = ScopeSource::kMetadata;
      if (s.source == ScopeSource::kNodeName && source_ == ScopeSource::kNone) source_ = ScopeSource::kNodeName;
      for (const ScopeLevel& level : s.levels) {
        if (s.source == ScopeSource::kMetadata)
          dynamo[level.module].push_back(n);
        else
          owned_[{level.module, level.call}].push_back(n);
      }
    }
    for (auto& [module, nodes] : dynamo) {
      const int64_t calls = calls_.contains(module) ? calls_[module] : 1;
      if (calls <= 1) {
        owned_[{module, 0}] = std::move(nodes);
        continue;
      }
      // Runs of the module's nodes in topological order: another call of
      // the module starts after a node outside it.
      std::vector<std::vector<size_t>> runs;
      size_t prev = 0;
      for (size_t n : nodes) {
        bool gap = runs.empty();
        for (size_t k = prev + 1; !gap && k < n; ++k) gap = !IsNeutral(g_.graph.nodes[k], scopes_[k]);
        if (gap) runs.emplace_back();
        runs.back().push_back(n);
        prev = n;
      }
      if (static_cast<int64_t>(runs.size()) != calls && static_cast<int64_t>(nodes.size()) == calls) {
        runs.clear();  // one node per call (a leaf op called back to back)
        for (size_t n : nodes) runs.push_back({n});
      }
      if (static_cast<int64_t>(runs.size()) == calls) {
        for (int64_t c = 0; c < calls; ++c) owned_[{module, c}] = std::move(runs[c]);
      } else {
        ambiguous_[module] = std::move(nodes);
      }
    }
  }

  AlignHow StructuralHow() const { return source_ == ScopeSource::kMetadata ? AlignHow::kScope : AlignHow::kName; }

  const Tensor* Value(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : it->second;
  }

  bool Agrees(const std::string& module, const Tensor& dumped, const std::string& tensor) const {
    const Tensor* v = Value(tensor);
    return v != nullptr && ValuesAgree(module, dumped, *v, options_.policy);
  }

  // Unknown shapes (tensors not observed) count as matching.
  bool ShapeFits(const Shape& shape, const std::string& tensor) const {
    const Tensor* v = Value(tensor);
    return v == nullptr || v->shape() == shape;
  }

  const std::vector<size_t>* Owned(const std::string& module, int64_t call) const {
    auto it = owned_.find({module, call});
    return it == owned_.end() || it->second.empty() ? nullptr : &it->second;
  }

  bool OwnsOp(const std::vector<size_t>* nodes, std::string_view op) const {
    return nodes != nullptr && std::any_of(nodes->begin(), nodes->end(),
                                           [&](size_t n) { return g_.graph.nodes[n].op_type == op; });
  }

  void Set(LayerAlignment& a, const std::string& tensor, AlignHow how, bool agree) {
    a.tensor = tensor;
    a.how = how;
    a.values_agree = agree;
    a.node.clear();
    a.op_type.clear();
    if (auto it = g_.graph.producer.find(tensor); it != g_.graph.producer.end()) {
      a.node = g_.graph.nodes[it->second].name;
      a.op_type = g_.graph.nodes[it->second].op_type;
    }
    if (auto it = g_.position.find(tensor); it != g_.position.end()) anchor_ = static_cast<long>(it->second);
  }

  // Outputs of `nodes` that a node outside them reads, or that are graph
  // outputs; topological order.
  std::vector<std::string> Escaping(const std::vector<size_t>& nodes) const {
    const std::unordered_set<size_t> inside(nodes.begin(), nodes.end());
    std::vector<std::string> out;
    for (size_t n : nodes) {
      for (const std::string& t : g_.graph.nodes[n].outputs) {
        if (t.empty()) continue;
        bool escapes = std::find(g_.graph.outputs.begin(), g_.graph.outputs.end(), t) != g_.graph.outputs.end();
        if (auto it = g_.graph.consumers.find(t); !escapes && it != g_.graph.consumers.end())
          for (size_t c : it->second) escapes = escapes || !inside.contains(c);
        if (escapes) out.push_back(t);
      }
    }
    return out;
  }

  // What `nodes` read from outside them (see EnteringTensor).
  std::vector<EnteringTensor> Entering(const std::vector<size_t>& nodes) const {
    const std::unordered_set<size_t> inside(nodes.begin(), nodes.end());
    const std::unordered_set<std::string> initializers(g_.graph.initializers.begin(), g_.graph.initializers.end());
    std::vector<EnteringTensor> out;
    std::unordered_set<std::string> seen;
    for (size_t n : nodes) {
      for (const std::string& t : g_.graph.nodes[n].inputs) {
        if (t.empty() || initializers.contains(t) || !seen.insert(t).second) continue;
        auto p = g_.graph.producer.find(t);
        if (p != g_.graph.producer.end() && (inside.contains(p->second) || g_.graph.nodes[p->second].op_type == "Constant"))
          continue;
        EnteringTensor e{t, "", "", "", 0};
        if (p != g_.graph.producer.end()) {
          const GraphNode& producer = g_.graph.nodes[p->second];
          e.node = producer.name;
          e.op_type = producer.op_type;
          if (!scopes_[p->second].levels.empty()) {
            e.module = paths_.ToDump(scopes_[p->second].levels.back().module);
            e.call = scopes_[p->second].levels.back().call;
          }
        }
        out.push_back(std::move(e));
      }
    }
    return out;
  }

  // The output indexes of the call's elements with `layer`'s shape, in order.
  std::vector<int64_t> ElementsOfShape(const TorchLayer& layer) const {
    std::vector<int64_t> out;
    for (const TorchLayer& l : dump_.layers)
      if (l.module == layer.module && l.call == layer.call && l.shape == layer.shape)
        out.push_back(l.output_index.value_or(0));
    return out;
  }

  // The escaping tensors of the dump's shape, in topological order.
  std::vector<std::string> OfShape(const std::vector<std::string>& escaping, const Shape& shape) const {
    std::vector<std::string> same;
    for (const auto& t : escaping)
      if (ShapeFits(shape, t)) same.push_back(t);
    return same;
  }

  // The call's output among the escaping tensors of the dump's shape: the
  // last (what the call returned is computed last); a tuple's element by its
  // rank among the call's elements of that shape, counted among the last as
  // many escaping tensors. "" when none, or for a tuple element when fewer
  // tensors leave the call than it returned elements of that shape: an
  // element the caller never used leaves none, and the tensor shape alone
  // would pick is another element's.
  std::string OutputCandidate(const std::vector<std::string>& same, const TorchLayer& layer) const {
    if (same.empty()) return "";
    if (!layer.output_index) return same.back();
    const std::vector<int64_t> elements = ElementsOfShape(layer);
    if (same.size() < elements.size()) return "";
    const auto rank = std::find(elements.begin(), elements.end(), *layer.output_index) - elements.begin();
    return same[same.size() - elements.size() + rank];
  }

  // What a value search saw: the tensor that agrees, else how many of the
  // dump's shape it tried and the first of them.
  struct Search {
    std::optional<std::string> found;
    int tried = 0;
    std::string first_tried;
    void Try(const std::string& t) {
      if (tried++ == 0) first_tried = t;
    }
  };

  // Tensors of the dump's shape, nearest first to the anchor (forward before
  // backward), within the window; the first that agrees. With `among`, only
  // those tensors.
  Search SearchByValue(const LayerAlignment& a, const Tensor& dumped,
                       const std::vector<std::string>* among = nullptr) const {
    Search s;
    auto consider = [&](const std::string& name) {
      const Tensor* v = Value(name);
      if (v == nullptr || v->shape() != dumped.shape()) return false;
      s.Try(name);
      if (!ValuesAgree(a.module, dumped, *v, options_.policy)) return false;
      s.found = name;
      return true;
    };
    if (among != nullptr) {
      for (const std::string& t : *among)
        if (consider(t)) break;
      return s;
    }
    const long n = static_cast<long>(g_.tensors.size());
    const long start = std::max(anchor_, 0L);
    for (long d = 0; d <= options_.search_window; ++d) {
      const long forward = start + d, backward = start - d;
      if (forward >= n && backward < 0) break;
      for (long pos : {forward, backward}) {
        if (pos < 0 || pos >= n) continue;
        if (consider(g_.tensors[pos].name)) return s;
        if (d == 0) break;  // forward and backward are the same position
      }
    }
    return s;
  }

  // The outputs of `nodes`, last node first.
  std::vector<std::string> OutputsOf(const std::vector<size_t>& nodes) const {
    std::vector<std::string> out;
    for (auto n = nodes.rbegin(); n != nodes.rend(); ++n)
      for (const std::string& t : g_.graph.nodes[*n].outputs)
        if (!t.empty()) out.push_back(t);
    return out;
  }

  // The eval BatchNorm that the export folded into the Conv computing layer
  // i's output, if any: the next BatchNorm layer, reached through only layer
  // i's containers and the BatchNorm's own children (BatchNormAct2d's act),
  // with layer i's shape and no BatchNormalization node. Either it owns the
  // fused Conv node (dynamo), which reads layer i's would-be input or stands
  // for layer i itself (a Conv without nodes), or layer i's output comes from
  // a Conv node (TorchScript names the fused node after the Conv).
  std::optional<size_t> FoldingBatchNorm(size_t i, const std::vector<size_t>* nodes,
                                         const std::string& candidate) const {
    const std::optional<size_t> j = NextBatchNorm(i);
    if (!j) return std::nullopt;
    const std::vector<size_t>* bn_nodes = OwnedBy(dump_.layers[*j]);
    if (OwnsOp(bn_nodes, "BatchNormalization")) return std::nullopt;
    if (OwnsOp(bn_nodes, "Conv")) {
      if (nodes == nullptr && IsConvType(dump_.layers[i].type)) return j;
      for (size_t n : *bn_nodes)
        if (g_.graph.nodes[n].op_type == "Conv" && !candidate.empty() && !g_.graph.nodes[n].inputs.empty() &&
            g_.graph.nodes[n].inputs[0] == candidate)
          return j;
      return std::nullopt;
    }
    const GraphNode* producer = candidate.empty() ? nullptr : g_.graph.Producer(candidate);
    if (nodes != nullptr && producer != nullptr && producer->op_type == "Conv") return j;
    return std::nullopt;
  }

  // The BatchNorm layer that could hold layer i's output folded, by the
  // dump alone: the next BatchNorm layer, with layer i's shape, reached
  // through only layer i's containers and the BatchNorm's own children.
  std::optional<size_t> NextBatchNorm(size_t i) const {
    const TorchLayer& layer = dump_.layers[i];
    std::vector<size_t> between;
    for (size_t j = i + 1; j < dump_.layers.size() && j <= i + 6; ++j) {
      const TorchLayer& bn = dump_.layers[j];
      if (!IsBatchNormType(bn.type)) {
        between.push_back(j);
        continue;
      }
      if (bn.shape != layer.shape) return std::nullopt;
      for (size_t k : between) {
        const std::string& m = dump_.layers[k].module;
        if (!layer.module.starts_with(m + ".") && !m.starts_with(bn.module + ".")) return std::nullopt;
      }
      return j;
    }
    return std::nullopt;
  }

  // The fused Conv node's output that a dynamo export scopes under the
  // BatchNorm of layer j.
  std::string FusedConvOutput(size_t j) const {
    const std::vector<size_t>* nodes = OwnedBy(dump_.layers[j]);
    if (nodes == nullptr) return "";
    for (size_t n : *nodes)
      if (g_.graph.nodes[n].op_type == "Conv" && !g_.graph.nodes[n].outputs.empty())
        return g_.graph.nodes[n].outputs[0];
    return "";
  }

  LayerAlignment AlignLayer(size_t i, const Tensor& dumped);
  void AlignWithoutNodes(size_t i, const Tensor& dumped, LayerAlignment& a);
  bool Fold(size_t i, const std::vector<size_t>* nodes, const std::string& candidate, LayerAlignment& a);
  void AlignTupleElement(size_t i, const Tensor& dumped, const std::vector<std::string>& same, LayerAlignment& a);
  void Refuse(const Search& search, LayerAlignment& a, const Tensor& dumped) const;
  void Settle();

  const TorchDump& dump_;
  const IndexedGraph& g_;
  const AlignOptions& options_;
  std::unordered_map<std::string, const Tensor*> values_;
  std::unordered_map<std::string, int64_t> calls_;  // export module path -> calls the dump saw
  std::vector<NodeScope> scopes_;                   // per node of g_.graph
  ModulePathMap paths_;                             // dump module path -> the export's
  ScopeSource source_ = ScopeSource::kNone;         // how the export records modules
  std::map<CallKey, std::vector<size_t>> owned_;    // module call -> its nodes, topological
  std::map<std::string, std::vector<size_t>> ambiguous_;  // dynamo modules whose calls blur
  std::map<size_t, std::string> folded_bn_;  // BatchNorm layer -> the fused Conv node's output
  std::map<size_t, size_t> fused_conv_of_;   // BatchNorm layer owning a fused Conv node -> that Conv's layer
  std::vector<LayerAlignment> out_;
  std::string last_tensor_;  // the tensor holding the latest value in execution order
  long anchor_ = -1;         // position of the last aligned tensor
};

}  // namespace parity::alignment_internal
