// The Ray engine of check --dataset: it writes the entries and the resolved
// configs into a temporary folder, runs `PY -m parity._ray_engine`
// (python/parity/_ray_engine.py: Ray Data map_batches on an actor pool, each
// actor running `parity dataset-worker`), waits, and reads the rows it wrote
// back (engine/dataset/dataset_rows.h).
#include "engine/ray/dataset_ray.h"

#include <fstream>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/json_out.h"
#include "core/scratch_dir.h"
#include "core/worker_protocol.h"
#include "engine/dataset/dataset_rows.h"
#include "engine/run/environment.h"
#include "ort/ep_libraries.h"

namespace parity {
namespace fs = std::filesystem;

namespace {

Status WriteInputs(const fs::path& tmp, const std::vector<fs::path>& entries, const DatasetOptions& o,
                   const DatasetReference& reference) {
  // Framed records (core/worker_protocol.h): a file name holding a
  // newline or bytes that are not UTF-8 stays one entry, exactly.
  std::string list;
  for (size_t i = 0; i < entries.size(); ++i) list += FormatEntryRecord(i, fs::absolute(entries[i]).string()) + "\n";
  PARITY_RETURN_IF_ERROR(WriteFileAtomic(tmp / "entries.jsonl", list));
  PARITY_RETURN_IF_ERROR(WriteJsonFile(tmp / "target.json", RunConfigToJson(o.target)));
  PARITY_RETURN_IF_ERROR(WriteJsonFile(tmp / "reference.json", RunConfigToJson(reference.config())));
  return WriteJsonFile(tmp / "tolerance.json", TolerancePolicyToJson(o.policy));
}

std::vector<std::string> DriverArgv(const DriverPython& py, const RayEngineOptions& ray, const DatasetOptions& o,
                                    const DatasetReference& reference, const fs::path& tmp) {
  std::vector<std::string> argv = RayDriverArgv(py, ray, tmp, /*progress=*/false);
  argv.insert(argv.end(), {"dataset-worker", fs::absolute(o.model_path).string(), "--target-config",
                           (tmp / "target.json").string(), "--tolerance-policy", (tmp / "tolerance.json").string()});
  // The reference: its config, and its model or stored outputs (FromWorker reads them back).
  const std::vector<std::string> reference_args = reference.WorkerArgs(tmp / "reference.json");
  argv.insert(argv.end(), reference_args.begin(), reference_args.end());
  if (o.allow_symlinks) argv.push_back("--allow-symlinks");
  // The actors run the ORT and the plugin EPs this process runs, whatever
  // their environment says (--ort-library, PARITY_ORT_LIBRARY, --ep-library).
  argv.insert(argv.end(), {"--ort-library", CurrentOrt().library});
  std::vector<std::string> providers = o.target.providers;
  providers.insert(providers.end(), reference.config().providers.begin(), reference.config().providers.end());
  for (const ort::EpLibrary& lib : ort::EpLibrariesFor(providers))
    argv.insert(argv.end(), {"--ep-library", lib.name + "=" + lib.path});
  return argv;
}

Status ReadRows(const fs::path& path, DatasetReport& report) {
  std::ifstream in(path);
  if (!in) return RuntimeError("--engine ray: the driver wrote no rows");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    PARITY_ASSIGN_OR_RETURN(DatasetLine l, ParseDatasetLine(line, report.outputs.size()));
    if (l.row) {
      report.rows.push_back(std::move(*l.row));
      continue;
    }
    ++report.skipped;
    if (report.bad.size() < kMaxListedBadSamples) report.bad.push_back(std::move(l.bad));
  }
  // "ENTRIES<TAB>SAMPLES" run again after an actor died (the driver's ledger).
  std::ifstream retried(path.string() + ".retried");
  if (retried >> report.retried_entries >> report.retried && report.retried_entries > 0)
    report.notes.push_back(fmt::format("{} samples ({} entries) were run again after a Ray actor died",
                                       report.retried, report.retried_entries));
  return {};
}

}  // namespace

DatasetRowSource RayRowSource(const RayEngineOptions& ray, const DatasetOptions& o) {
  return [ray, o](const std::vector<fs::path>& entries, const DatasetReference& reference,
                  DatasetReport& report) -> Status {
    // Registered: an interrupt before the driver runs (or after it) removes it too.
    PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, WithContext(ScratchDir::Create("ray"), "--engine ray"));
    const fs::path tmp = scratch.path();
    PARITY_RETURN_IF_ERROR(WriteInputs(tmp, entries, o, reference));
    PARITY_ASSIGN_OR_RETURN(const DriverPython py, FindDriverPython(ray.python));
    PARITY_RETURN_IF_ERROR(RunRayDriver(DriverArgv(py, ray, o, reference, tmp), py.pythonpath, tmp));
    return ReadRows(tmp / "rows.txt", report);
  };
}

}  // namespace parity
