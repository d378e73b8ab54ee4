#include "onnx/layout_reorder.h"

#include <fmt/format.h>

#include <unordered_set>

#include "onnx/model_internal.h"

namespace parity {

Result<Model> WithLayoutReorders(const Model& m, const std::vector<LayoutReorder>& reorders) {
  Model out = m.Clone();
  auto& g = *onnx_adapter::MutableProto(out).mutable_graph();
  std::unordered_set<std::string> produced;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) produced.insert(o);
  for (const auto& r : reorders) {
    if (r.channels <= 0)
      return InvalidArgument(fmt::format("reorder of '{}': channels must be positive, not {}", r.blocked, r.channels));
    if (!produced.contains(r.blocked))
      return NotFound(fmt::format("blocked tensor '{}' is not produced by any node of the graph", r.blocked));
    if (!produced.insert(r.name).second)
      return InvalidArgument(fmt::format("tensor '{}' is already produced by the graph", r.name));
    auto* node = g.add_node();
    node->set_name("parity_reorder_" + r.name);
    node->set_op_type("ReorderOutput");
    node->set_domain("com.microsoft.nchwc");
    node->add_input(r.blocked);
    node->add_output(r.name);
    auto* attr = node->add_attribute();
    attr->set_name("channels");
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(r.channels);
  }
  bool has_domain = false;
  for (const auto& o : onnx_adapter::Proto(out).opset_import()) has_domain = has_domain || o.domain() == "com.microsoft.nchwc";
  if (!has_domain && !reorders.empty()) {
    auto* o = onnx_adapter::MutableProto(out).add_opset_import();
    o->set_domain("com.microsoft.nchwc");
    o->set_version(1);
  }
  return out;
}

}  // namespace parity
