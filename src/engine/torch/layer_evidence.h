// Which layers that depart from PyTorch are evidence (issue 50;
// docs/evidence.md). A layer judged against PyTorch fails the
// check only when its divergence is evidence:
//
//   systematic  more than a handful of its elements are outside their band
//               (kHandful, or one in kHandfulPerElements of a large tensor),
//               or one of them is beyond kFewBands times its own band;
//   propagating the outputs it feeds depart from PyTorch too.
//
// An isolated excursion (a handful of elements within a few times the band:
// float32's noise at the edge of a band set by the tensor's rms) is a note
// on the layer, never a failed test, and never the first divergence: the
// first divergent layer is the first layer with evidence, so a fault planted
// downstream of a noisy layer is named at its own module. When the outputs
// fail and no layer is systematic, the first excursion among the layers the
// failing outputs are computed from is the divergence after all.
// Measured on healthy exports (issue 50): one element of 128-20,000 of a
// BatchNorm-folded Conv or an SE/SiLU Mul at up to 2.7x its band, on one
// CPU's kernels and not another's.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "compare/tolerance.h"
#include "core/tensor.h"
#include "engine/runner/runner.h"
#include "engine/torch/torch_compare.h"

namespace parity {

inline constexpr int64_t kHandful = 4;
inline constexpr int64_t kHandfulPerElements = 2000;
inline constexpr double kFewBands = 8;

// The largest |test - ref| / (atol + rtol*|ref|) over the finite pairs of
// two float tensors of one shape (+inf when a NaN/Inf differs, or an
// element differs under a zero band).
double WorstBandRatio(const Tensor& ref, const Tensor& test, const Tolerance& tol);

// Whether a failing layer's divergence is an isolated excursion (above), or
// a mask folded in (IsFoldedMask, below: a note alike); its note ("an
// isolated excursion: 1 of 8000 elements ...") into `note`.
bool IsIsolatedExcursion(const Tensor& ref, const Tensor& test, const LayerVerdict& v, std::string& note);

// A mask the export folded in: a failing layer whose only elements outside
// the band hold an attention mask's fill (at most -1e30, or -inf) on one side
// and an ordinary value on the other, every other element within its band
// (T5's position bias: torchscript passes it on with the causal mask added,
// PyTorch adds the mask later). A note as an isolated excursion is, and as
// one it is evidence again when the outputs depart.
bool IsFoldedMask(const Tensor& ref, const Tensor& test, const LayerVerdict& v, std::string& note);

// After the outputs are judged: with failing outputs and no first
// divergence, the first noted layer among `feeds` (the tensors the failing
// outputs are computed from; any when empty) fails again and becomes it.
void ReinstatePropagatingExcursion(TorchComparison& c, const std::set<std::string>& feeds);

// The conditioning of the failing layers' tensors (compare/tolerance.h
// ApplyConditioningFloor): `job` run twice more on `runner` (its kept
// session) on `inputs` moved by
// one ulp (engine/inputs/perturb.h), |v' - v| of each failing layer's ONNX
// tensor, the larger of the two draws. On a sample float32 cannot decide
// (a random-weight network fed noise) the layers' bands follow what it
// can; elsewhere the spread sits far below them. Empty when no failing
// layer has a tensor or a perturbed run fails (then nothing changes).
Result<TensorSet> LayerSpread(Runner& runner, const RunnerJob& job, const TensorSet& inputs,
                              const TensorSet& values, const TorchComparison& c);

}  // namespace parity
