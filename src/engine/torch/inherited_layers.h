// Layers that cannot grow an error (issue 40): an elementwise activation
// that is 1-Lipschitz (ReLU, ReLU6, Hardtanh, LeakyReLU, Sigmoid, Tanh,
// Hardsigmoid; Dropout and Identity in eval) or a max pooling changes no
// element by more than its input changed. When such a layer fails its own
// band (set by its own, smaller, rms: a ReLU6 zeroes half of what the Conv
// before it gave) while its input, the tensor a passing layer produced,
// departs from PyTorch's by at least as much, the layer made no error of
// its own: it passes, saying so ("inherited"). A healthy SSDlite export
// failed at a ReLU6 on 1 of 12800 elements, 2.7e-5 against a band of
// 1.5e-5, its Conv's output passing.
#pragma once

#include "core/status.h"
#include "core/tensor.h"
#include "engine/torch/torch_compare.h"
#include "engine/torch/torch_dump.h"

namespace parity {

// Re-judges the failing non-expanding layers of `c` as above and moves its
// first divergence to the first layer still failing (none when none).
Status PassInheritedLayers(const TorchDump& dump, const TensorSet& onnx_values, TorchComparison& c);

}  // namespace parity
