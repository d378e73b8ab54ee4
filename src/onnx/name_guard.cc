#include "onnx/name_guard.h"

#include <fmt/format.h>

#include <string_view>

#include "core/short_name.h"
#include "core/visible_text.h"

namespace parity::onnx_adapter {
namespace {

// A name within the limit but too long to repeat is remembered: reports and
// the console show it shortened (core/short_name.h ShortenLongNames).
Status Check(std::string_view name, std::string_view what) {
  if (name.size() <= static_cast<size_t>(kMaxNameBytes)) {
    RememberLongName(name);
    return {};
  }
  return InvalidArgument(fmt::format("{} '{}' is {} bytes long, more than the limit of {}", what,
                                     ShowControls(ShortName(name)), name.size(), kMaxNameBytes));
}

Status CheckNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes);

Status CheckGraph(const onnx::GraphProto& g) {
  PARITY_RETURN_IF_ERROR(Check(g.name(), "graph name"));
  for (const auto& v : g.input()) PARITY_RETURN_IF_ERROR(Check(v.name(), "graph input"));
  for (const auto& v : g.output()) PARITY_RETURN_IF_ERROR(Check(v.name(), "graph output"));
  for (const auto& v : g.value_info()) PARITY_RETURN_IF_ERROR(Check(v.name(), "value_info"));
  for (const auto& t : g.initializer()) PARITY_RETURN_IF_ERROR(Check(t.name(), "initializer"));
  for (const auto& s : g.sparse_initializer()) PARITY_RETURN_IF_ERROR(Check(s.values().name(), "initializer"));
  return CheckNodes(g.node());
}

Status CheckNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
  for (const onnx::NodeProto& n : nodes) {
    PARITY_RETURN_IF_ERROR(Check(n.name(), "node name"));
    PARITY_RETURN_IF_ERROR(Check(n.op_type(), "op type"));
    for (const auto& s : n.input()) PARITY_RETURN_IF_ERROR(Check(s, "node input"));
    for (const auto& s : n.output()) PARITY_RETURN_IF_ERROR(Check(s, "node output"));
    for (const auto& a : n.attribute()) {
      if (a.has_g()) PARITY_RETURN_IF_ERROR(CheckGraph(a.g()));
      for (const auto& g : a.graphs()) PARITY_RETURN_IF_ERROR(CheckGraph(g));
    }
  }
  return {};
}

}  // namespace

Status CheckNameLengths(const onnx::ModelProto& model) {
  PARITY_RETURN_IF_ERROR(CheckGraph(model.graph()));
  for (const onnx::FunctionProto& f : model.functions()) {
    PARITY_RETURN_IF_ERROR(Check(f.name(), "function name"));
    PARITY_RETURN_IF_ERROR(CheckNodes(f.node()));
  }
  return {};
}

}  // namespace parity::onnx_adapter
