// The Ray engine's driver process (python/parity/_ray_engine.py: Ray Data
// map_batches over an actor pool, each actor running one of parity's hidden
// workers: engine/ray/dataset_worker.h, engine/ray/corpus_worker.h). The
// dataset's and the corpus's Ray rows (engine/ray/dataset_ray.h,
// engine/ray/corpus_ray.h) write their entries into a scratch folder, run the
// driver with RunRayDriver and read the rows it wrote back.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/ray/driver_python.h"

namespace parity {

// Where and how wide the Ray engine runs (check's --ray-address,
// --ray-actors, --ray-python).
struct RayEngineOptions {
  std::string address;  // a cluster to join; empty: a local one, its files in the scratch folder
  int actors = 2;       // actors in the pool
  std::string python;   // the driver's Python; empty: FindDriverPython's search
};

// The driver's command line up to its worker's: `PY -m parity._ray_engine
// --entries SCRATCH/entries.jsonl --out SCRATCH/rows.txt --actors N
// [--progress] (--address A | --temp-dir SCRATCH/ray) -- PARITY`, PARITY
// being this binary (/proc/self/exe). The caller appends the worker's
// subcommand and its arguments.
std::vector<std::string> RayDriverArgv(const DriverPython& py, const RayEngineOptions& ray,
                                       const std::filesystem::path& scratch, bool progress);

// Runs the driver `argv` with its stdout on our stderr (Ray's logs stay off
// the summary), PYTHONPATH prefixed with `pythonpath` when it is not empty,
// and waits for it; a SIGINT/SIGTERM meanwhile is forwarded to it. Then: an
// interrupt (ours, or the driver's exit 128 + SIGINT/SIGTERM: a terminal's
// Ctrl-C reaches the whole process group) removes `scratch` and raises the
// signal again, so the process's own handler (cli/signals.h) ends it and this
// returns only where that handler does not exit; exit 2 is the driver refusing
// the run (kInvalidArgument, its message already on stderr); any other failure
// kRuntime. Not thread-safe: one driver at a time (the forwarding handler's
// pid is a global).
Status RunRayDriver(const std::vector<std::string>& argv, const std::string& pythonpath,
                    const std::filesystem::path& scratch);

}  // namespace parity
