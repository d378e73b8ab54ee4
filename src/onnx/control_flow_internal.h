// Internal to src/onnx: helpers shared by control_flow_probe.cc and
// control_flow_inline.cc.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>

namespace parity::control_flow_internal {

// An If, Loop or Scan of the default domain.
bool IsControlFlow(const onnx::NodeProto& n);
// The graph attribute `name` of `n`, or null.
const onnx::GraphProto* GraphAttribute(const onnx::NodeProto& n, std::string_view name);
// The nodes a copy of `n` holds: itself and every node of the graphs in its
// attributes, nested bodies included (what copying it costs; issue 56 class 2).
size_t NodeWeight(const onnx::NodeProto& n);
// Every node of `g`, nested bodies included.
size_t GraphWeight(const onnx::GraphProto& g);
// The value of metadata entry `key` of `n`, "" when absent.
std::string MetadataOf(const onnx::NodeProto& n, std::string_view key);
// Sets (or adds) metadata entry `key` of `n`.
void SetMetadata(onnx::NodeProto& n, std::string_view key, const std::string& value);

}  // namespace parity::control_flow_internal
