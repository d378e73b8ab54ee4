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
// The value of metadata entry `key` of `n`, "" when absent.
std::string MetadataOf(const onnx::NodeProto& n, std::string_view key);
// Sets (or adds) metadata entry `key` of `n`.
void SetMetadata(onnx::NodeProto& n, std::string_view key, const std::string& value);

}  // namespace parity::control_flow_internal
