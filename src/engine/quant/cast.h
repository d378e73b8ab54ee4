// Floating tensors rounded to another floating dtype: a float model's values
// fed to a float16 model (or a float16 region), as the converters' Casts would.
#pragma once

#include "core/tensor.h"
#include "onnx/graph.h"
#include "ort/session.h"

namespace parity {

// `t` as `dtype` when both are float16/float32/float64 and they differ
// (round to nearest even through float); otherwise `t` unchanged.
Tensor CastFloating(const Tensor& t, DType dtype);

// `sample` with each floating input cast to the dtype `session` declares for
// it (a float32 sample fed to a float16 model converted without
// keep_io_types, or the reverse); other inputs unchanged.
Sample FitToSession(const ort::Session& session, const Sample& sample);

// The same from a model's graph: each floating input cast to the dtype the
// graph declares for it (locate's target trace, before any session exists).
Sample FitToGraph(const GraphView& view, const Sample& sample);

// `test` with each floating tensor cast to the dtype of `ref`'s tensor of
// the same name (a float16 model's outputs compared in float32).
TensorSet CastLike(const TensorSet& test, const TensorSet& ref);

}  // namespace parity
