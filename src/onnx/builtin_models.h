// Models parity builds itself, for the demo, tests and benchmarks. Each is
// deterministic (fixed seed), float32, opset 17 unless said otherwise, passes
// the ONNX checker and shape inference, and is built to exercise ORT's
// fusions at ORT_ENABLE_ALL. Seen with ORT 1.29 on x86 at ORT_ENABLE_ALL:
//   ConvBnRelu       -> nchwc Conv (BN and Relu folded in) + ReorderOutput
//   ResidualCnn      -> 15 nchwc Conv, nchwc MaxPool/GlobalAveragePool
//   TransformerBlock -> LayerNormalization x4, SkipLayerNormalization, Gelu x2,
//                       QuickGelu (the SiLU), FusedMatMul x2, Gemm x13
#pragma once

#include "onnx/model.h"

namespace parity {

// The seed's model: Conv(3->16, 3x3, pad 1) + BatchNormalization + Relu.
// Input `input` [1, 3, 224, 224], output `output` [1, 16, 224, 224].
// Nodes "/conv/Conv", "/bn/BatchNormalization", "/relu/Relu".
Model ConvBnRelu();

// A small ResNet-like CNN (>= 50 nodes): stem, residual blocks (Conv, BN,
// Relu, Add skip, a strided block with a 1x1 projection), a nearest Resize
// upsample, GlobalAveragePool, Flatten, Gemm head.
// Input `input` [1, 3, 64, 64], output `logits` [1, 10].
Model ResidualCnn();

// A transformer encoder (two layers, >= 50 nodes): decomposed LayerNorm,
// MatMul+Add projections, 4-head attention (Reshape/Transpose/MatMul/Div/
// Softmax), decomposed erf-Gelu MLP, residual Adds, and a SiLU head.
// Input `input` [1, 16, 64], output `output` [1, 16, 64].
Model TransformerBlock();

// A ResNet-like trunk of `blocks` residual blocks for the drill-down's tests
// and benchmark: a stem Conv+BN+Relu (3 -> 16 channels), then per block
// Conv+BN+Relu, Conv+BN, Add, Relu; with `downsample_every` > 0 every
// downsample_every-th block is strided, doubles the channels and projects its
// skip with a 1x1 Conv+BN (scope `down`); 0 keeps 16 channels at 32x32. Then
// a head (scope `head`): GlobalAveragePool, Flatten, Gemm to 10.
// Input `input` [1, 3, 32, 32], output `logits` [1, 10]; 1 + 2 * blocks Convs
// plus one per strided block.
Model ResidualTrunk(int blocks, int downsample_every);

// A tiny model at any opset (>= 13): input `x` [2, 8], LayerNorm-like
// ReduceMean/Sub, Relu, output `y`. At opset >= 18 ReduceMean takes its axes
// as an input.
Model OpsetModel(int opset);

}  // namespace parity
