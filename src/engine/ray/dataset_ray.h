// check --dataset on Ray (docs/dataset.md, "--engine ray"): the rows of a
// dataset's entries computed by Ray actors, each running `parity
// dataset-worker` (engine/ray/dataset_worker.h) with the sessions made once.
#pragma once

#include "engine/dataset/dataset.h"
#include "engine/ray/ray_driver.h"

namespace parity {

// A row source for RunDataset (DatasetOptions::rows): writes the entries
// (core/worker_protocol.h's framed records) and the resolved configs and
// tolerance policy into a scratch folder, runs the driver (RunRayDriver) with
// `options`' model, reference, ORT library and plugin EP libraries passed to
// every actor, and reads back the rows and bad samples it wrote
// (engine/dataset/dataset_rows.h), with a note when an actor died and its
// samples were run again. Errors: the driver's Python not found
// (kInvalidArgument), the driver's (RunRayDriver), a row that does not parse.
DatasetRowSource RayRowSource(const RayEngineOptions& ray, const DatasetOptions& options);

}  // namespace parity
