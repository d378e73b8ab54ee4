#include "engine/quant/layer_match.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_set>

namespace parity {

namespace {

bool IsRepresentation(const GraphNode& n) {
  return n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear" || n.op_type == "Cast";
}

// The names a graph knows: node outputs, inputs and initializers.
struct Names {
  std::unordered_set<std::string> tensors, initializers, nodes;
  explicit Names(const GraphView& g) {
    for (const auto& n : g.nodes) {
      nodes.insert(n.name);
      for (const auto& o : n.outputs)
        if (!o.empty()) tensors.insert(o);
    }
    tensors.insert(g.inputs.begin(), g.inputs.end());
    initializers.insert(g.initializers.begin(), g.initializers.end());
    tensors.insert(g.initializers.begin(), g.initializers.end());
  }
};

// A node the converter inserted: a representation node the float model does not have.
const GraphNode* InsertedProducer(const GraphView& d, const Names& f, const std::string& t) {
  const GraphNode* p = d.Producer(t);
  return p && IsRepresentation(*p) && !f.nodes.count(p->name) ? p : nullptr;
}

// Follows `out` of a derived node forward to what the float model compares
// with it (QuantizeLinear -> DequantizeLinear, or an inserted Cast).
void FollowOutput(const GraphView& d, const Names& f, const std::string& out, LayerPlan& plan) {
  std::string cur = out;
  plan.layer.derived_tensor = out;
  if (f.tensors.count(out)) plan.layer.tensor = out;
  for (int hop = 0; hop < 3; ++hop) {
    auto it = d.consumers.find(cur);
    if (it == d.consumers.end()) return;
    const GraphNode* next = nullptr;
    for (size_t c : it->second) {
      const GraphNode& n = d.nodes[c];
      if (IsRepresentation(n) && !f.nodes.count(n.name) && n.inputs[0] == cur) next = &n;
    }
    if (next == nullptr || next->outputs.empty()) return;
    if (next->op_type == "QuantizeLinear") {
      plan.scale = next->inputs.size() > 1 ? next->inputs[1] : "";
      plan.zero_point = next->inputs.size() > 2 ? next->inputs[2] : "";
      auto dq = d.consumers.find(next->outputs[0]);
      if (dq == d.consumers.end()) return;
      for (size_t c : dq->second) {
        if (d.nodes[c].op_type != "DequantizeLinear") continue;
        plan.layer.derived_tensor = d.nodes[c].outputs[0];
        // A quantized graph output: the node writes "<output>_QuantizeLinear_Input", the DequantizeLinear the name.
        if (plan.layer.tensor.empty() && f.tensors.count(plan.layer.derived_tensor))
          plan.layer.tensor = plan.layer.derived_tensor;
      }
      return;
    }
    if (next->op_type == "DequantizeLinear") {
      // A node computing on codes (quantize_dynamic's Gather of an int8 table): its DequantizeLinear.
      plan.scale = next->inputs.size() > 1 ? next->inputs[1] : "";
      plan.zero_point = next->inputs.size() > 2 ? next->inputs[2] : "";
      plan.layer.derived_tensor = next->outputs[0];
      if (plan.layer.tensor.empty() && f.tensors.count(next->outputs[0])) plan.layer.tensor = next->outputs[0];
      return;
    }
    if (next->op_type != "Cast") return;
    cur = next->outputs[0];
    if (plan.layer.tensor.empty() && f.tensors.count(cur)) {
      plan.layer.tensor = cur;
      plan.layer.derived_tensor = cur;
    }
  }
}

// Follows input `i` of the derived node back through inserted nodes: a float
// tensor (a local input) or an initializer (the weight).
void FollowInput(const GraphView& d, const Names& f, const Names& dn, const GraphNode& fnode,
                 const GraphNode& dnode, size_t i, LayerPlan& plan) {
  std::string t = dnode.inputs[i];
  std::string dq_scale;
  // The deepest tensor on the way that the float model has is the local input.
  std::string known = f.tensors.count(t) ? t : "";
  while (const GraphNode* p = InsertedProducer(d, f, t)) {
    if (p->op_type == "DequantizeLinear" && p->inputs.size() > 1) dq_scale = p->inputs[1];
    t = p->inputs[0];
    if (f.tensors.count(t)) known = t;
  }
  const std::string& float_input = i < fnode.inputs.size() ? fnode.inputs[i] : t;
  if (dn.initializers.count(t) && f.initializers.count(float_input)) {
    if (!plan.weight && i > 0) {
      plan.weight = LayerPlan::Weight{.float_tensor = float_input,
                                      .derived_tensor = dnode.inputs[i],
                                      .derived_is_initializer = dn.initializers.count(dnode.inputs[i]) > 0,
                                      .scale = dq_scale};
    }
    return;
  }
  if (f.initializers.count(t) || dn.initializers.count(t) || known.empty()) return;  // a constant
  plan.layer.inputs.push_back(known);
}

// The float nodes between `fnode` and the producer of the compared tensor:
// what the derived model folded into this layer.
std::vector<std::string> Folded(const GraphView& fv, const GraphNode& fnode, const std::string& tensor) {
  std::vector<std::string> folded;
  const GraphNode* p = fv.Producer(tensor);
  for (int hop = 0; p && p->name != fnode.name && hop < 4; ++hop) {
    folded.insert(folded.begin(), p->name);
    p = p->inputs.empty() ? nullptr : fv.Producer(p->inputs[0]);
  }
  return folded;
}

// The derived model's kind from the types that carry its values (issue 50):
// a float16 model holds float16 (or bfloat16) tensors; a Cast alone (an
// int64 -> int64 Cast a hand edit added) makes no float16 model.
std::string KindOf(const GraphView& d, const Names& f) {
  bool qdq = false, half = false;
  for (const auto& n : d.nodes) {
    if (f.nodes.count(n.name)) continue;
    qdq = qdq || n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear";
  }
  for (const auto& [name, type] : d.types)
    half = half || type.dtype == DType::kFloat16 || type.dtype == DType::kBFloat16;
  for (const auto& n : d.nodes) qdq = qdq || n.op_type == "DynamicQuantizeLinear";
  return qdq ? "qdq" : half ? "float16" : "float";
}

// quantize_dynamic's "N_quant" (MatMulInteger / MatMulIntegerToFloat /
// ConvInteger) for the float node N, compared on N's output name (see the
// header); nullopt when there is none.
std::optional<LayerPlan> MatchDynamic(const GraphView& fv, const GraphView& d, const Names& f, const Names& dn,
                                      const GraphNode& fnode) {
  const auto at = d.FindNode(fnode.name + "_quant");
  if (!at || fnode.outputs.empty() || !dn.tensors.count(fnode.outputs[0])) return std::nullopt;
  const GraphNode& q = d.nodes[*at];
  if (q.op_type != "MatMulInteger" && q.op_type != "MatMulIntegerToFloat" && q.op_type != "ConvInteger")
    return std::nullopt;
  LayerPlan plan;
  plan.layer.node = fnode.name;
  plan.layer.op_type = fnode.op_type;
  plan.layer.module = ModuleFromNodeName(fnode.name);
  plan.layer.compute = IsComputeOp(fnode.op_type);
  plan.layer.tensor = plan.layer.derived_tensor = fnode.outputs[0];
  plan.layer.note = fmt::format("dynamic quantization: {} '{}' on activations quantized at run time "
                                "(DynamicQuantizeLinear), so no constant scale and no steps",
                                q.op_type, q.name);
  for (size_t i = 0; i < fnode.inputs.size(); ++i) {
    const std::string& in = fnode.inputs[i];
    if (f.initializers.count(in)) {
      if (!plan.weight && dn.initializers.count(in + "_quantized") && dn.initializers.count(in + "_scale"))
        plan.weight = LayerPlan::Weight{.float_tensor = in, .derived_tensor = in + "_quantized",
                                        .derived_is_initializer = true, .scale = in + "_scale",
                                        .zero_point = dn.initializers.count(in + "_zero_point") ? in + "_zero_point" : "",
                                        .codes = true};
    } else if (dn.tensors.count(in)) {
      plan.layer.inputs.push_back(in);
    }
  }
  (void)fv;
  return plan;
}

}  // namespace

bool IsComputeOp(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

std::string ModuleFromNodeName(const std::string& name) {
  if (name.empty() || name[0] != '/') return "";
  std::vector<std::string> parts;
  for (size_t start = 1, end; start <= name.size(); start = end + 1) {
    end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    parts.push_back(name.substr(start, end - start));
  }
  parts.pop_back();  // the op itself
  std::string module, last;
  for (const auto& p : parts) {
    // "layer1.0" under "layer1" is that module's child: its path continues the parent's last atom.
    if (!last.empty() && p.starts_with(last + ".")) {
      module.resize(module.size() - last.size());
      module += p;
    } else {
      module += (module.empty() ? "" : ".") + p;
    }
    last = p;
  }
  return module;
}

LayerMatch MatchLayers(const GraphView& fv, const GraphView& dv) {
  const Names f(fv), dn(dv);
  LayerMatch m{.kind = KindOf(dv, f)};
  std::unordered_set<std::string> compared;
  for (const auto& fnode : fv.nodes) {
    const bool compute = IsComputeOp(fnode.op_type);
    m.compute_layers += compute;
    const auto at = dv.FindNode(fnode.name);
    if (!at) {
      if (auto dynamic = MatchDynamic(fv, dv, f, dn, fnode); dynamic && !dynamic->layer.inputs.empty() &&
                                                              compared.insert(dynamic->layer.tensor).second) {
        m.compute_matched += compute;
        m.layers.push_back(std::move(*dynamic));
        continue;
      }
      const GraphNode* p = fnode.outputs.empty() ? nullptr : dv.Producer(fnode.outputs[0]);
      if (p == nullptr || !f.nodes.count(p->name))
        m.unmatched.push_back({fnode.name, fnode.op_type,
                               "no node of that name in the derived model (renamed, fused or removed)"});
      continue;  // otherwise folded into that node's layer (see Folded)
    }
    const GraphNode& dnode = dv.nodes[*at];
    if (dnode.op_type != fnode.op_type) {
      m.unmatched.push_back({fnode.name, fnode.op_type,
                             fmt::format("the derived model's node of that name is a {}", dnode.op_type)});
      continue;
    }
    if (dnode.outputs.empty() || dnode.outputs[0].empty()) continue;
    LayerPlan plan;
    plan.layer.node = fnode.name;
    plan.layer.op_type = fnode.op_type;
    plan.layer.module = ModuleFromNodeName(fnode.name);
    plan.layer.compute = compute;
    FollowOutput(dv, f, dnode.outputs[0], plan);
    if (plan.layer.tensor.empty()) {
      m.unmatched.push_back({fnode.name, fnode.op_type,
                             fmt::format("its output '{}' has no counterpart in the float model", dnode.outputs[0])});
      continue;
    }
    if (!compared.insert(plan.layer.tensor).second) continue;
    plan.layer.folded = Folded(fv, fnode, plan.layer.tensor);
    for (size_t i = 0; i < dnode.inputs.size(); ++i)
      if (!dnode.inputs[i].empty()) FollowInput(dv, f, dn, fnode, dnode, i, plan);
    if (plan.layer.inputs.empty()) continue;  // a constant (an Identity of an initializer): not a layer
    m.compute_matched += compute;
    m.layers.push_back(std::move(plan));
  }
  return m;
}

}  // namespace parity
