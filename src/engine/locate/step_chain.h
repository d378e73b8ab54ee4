// Narrowing a fused chain of quantized kernels (the NhwcTransformer chain of
// QLinearConvs, whose NHWC tensors between kernels cannot be observed) to
// the kernel where the steps first appear (issue 25 item 3,
// docs/quantized.md "At the deployed config"): each Conv/Gemm/MatMul the
// fused node covers is cut out from its inputs' QuantizeLinear outputs to its
// own QuantizeLinear output, fed the reference trace's uint8 values and run
// under both configs; its difference in grid units is its own.
#pragma once

#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/quant/quant_result.h"
#include "onnx/graph.h"
#include "onnx/model.h"

namespace parity {

// The first kernel of `t.chain` whose own difference passes `above` steps
// (0 for rounding, 1 for a failure) into t.kernel; "" when none does.
void NarrowToKernel(QuantStepTensor& t, double above);

struct StepChainInputs {
  const Model& reference_model;
  const Model& target_model;
  const GraphView& target_view;
  const TensorSet& reference_values;  // the reference trace
  const Sample& sample;               // to trace the chain's inner tensors the trace lacks
  RunConfig reference, target;
  std::string label;
};

// Each kernel among `covers` (original node names) measured alone; kernels
// that cannot be cut (an input not on a QuantizeLinear grid) are skipped.
// Errors: a session or run that fails. Adds its sessions to *sessions.
Result<std::vector<QuantKernelSteps>> MeasureChain(const StepChainInputs& in, const std::vector<std::string>& covers,
                                                   int* sessions);

}  // namespace parity
