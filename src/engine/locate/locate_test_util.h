// Shared by the locate tests and bench/drilldown_bench.cc.
#pragma once

#include "engine/locate/locate.h"

namespace parity::testing {

// Locate without the ablation pass, each session on one intra-op thread: the
// drill-down's own cost and result, steady on a shared machine.
inline LocateOptions DrillDownOptions() {
  LocateOptions o;
  o.ablation = false;
  o.target.intra_op_threads = 1;
  o.reference.intra_op_threads = 1;
  return o;
}

}  // namespace parity::testing
