// How many times ONNX Runtime ran a model for this process: every run of a
// session here (Session::Run, the latency loop's timed runs) and every job a
// child runtime ran for it (engine/runner's child runner counts those). A
// check reports the count per step (issue 55): a value produced twice shows.
// Thread-safe.
#pragma once

#include <cstdint>

namespace parity::ort {

int64_t OrtRuns();
void CountOrtRuns(int64_t n);

}  // namespace parity::ort
