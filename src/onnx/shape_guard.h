// Internal to src/onnx: a structural check run before ONNX's shape inference,
// which dereferences bad pointers on some malformed nodes instead of throwing
// (a SIGSEGV cannot be caught). Each rule names a known crash.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace parity::onnx_adapter {

// What makes shape inference unsafe to run on `model`, one message per node
// ("node 'c' (Conv): weight 'w' has rank 0, the input 'x' rank 4"); empty when
// none of the known hazards is present. Ranks are taken from graph inputs'
// declared shapes and initializers, in the main graph and every subgraph:
//   Conv, ConvTranspose, ConvInteger: weight rank >= 3 and equal to the
//     input's; bias rank 1 (onnx/onnx#6180: a rank-0 weight segfaults);
//   Gemm: A and B rank 2, C rank <= 2 (onnx/onnx#6185).
std::vector<std::string> ShapeInferenceHazards(const onnx::ModelProto& model);

}  // namespace parity::onnx_adapter
