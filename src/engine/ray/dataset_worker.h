// The evaluator of one Ray actor of check --dataset (python/parity/_ray_engine.py,
// docs/dataset.md), served by the hidden `parity dataset-worker MODEL`
// (cli/cmd_dataset_worker.cc). It speaks the one worker protocol
// (core/worker_protocol.h) on a pipe pair:
//   worker: "O<TAB>N"            the sessions exist, N outputs are judged
//   driver: an entry record      the command's own list, forwarded
//   worker: the entry's rows     engine/dataset/dataset_rows.h (FormatDatasetRow;
//                                FormatDatasetBad, the protocol's failure line)
//           "E<TAB>INDEX"        the entry is done
// Being the local engine's own code (EvaluateDatasetEntry), its rows are bit
// for bit the local engine's.
#pragma once

#include <iosfwd>
#include <string>

#include "core/status.h"

namespace parity {

// What the driver passes every actor (engine/ray/dataset_ray.cc writes the
// files): paths of the model, the reference model ("" for a config
// reference), the resolved target and reference configs and the tolerance
// policy (JSON files), the stored reference outputs ("" for none).
struct DatasetWorkerOptions {
  std::string model, reference_model, target_config, reference_config, tolerance, reference_outputs;
  int threads = 0;  // > 0: the intra-op threads of both sessions
  bool allow_symlinks = false;
};

// Loads the models, configs and policy, creates the sessions once, writes
// "O<TAB>N", then answers every entry record read from `in` until it ends.
// Returns {} when `in` ends; an error (nothing more written) for a file that
// does not load, a session ORT refuses, or a line that is longer than a
// record may be (kMaxEntryRecordBytes) or is no record (kInvalidArgument:
// the driver sees the worker exit). A bad sample is a row, not an error.
Status ServeDatasetWorker(const DatasetWorkerOptions& o, std::istream& in, std::ostream& out);

}  // namespace parity
