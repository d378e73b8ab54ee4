#include "engine/ray/corpus_ray.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/json_out.h"
#include "core/scratch_dir.h"
#include "core/worker_protocol.h"
#include "engine/generate/corpus_result.h"
#include "engine/run/environment.h"

namespace parity {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> DriverArgv(const DriverPython& py, const RayEngineOptions& ray, const std::string& model,
                                    const std::string& corpus_dir, const fs::path& tmp) {
  std::vector<std::string> argv = RayDriverArgv(py, ray, tmp, /*progress=*/true);
  argv.insert(argv.end(), {"corpus-worker", fs::absolute(model).string(), "--corpus", corpus_dir, "--target-config",
                           (tmp / "target.json").string(), "--ort-library", CurrentOrt().library});
  return argv;
}

Result<std::vector<CorpusPrompt>> ReadRows(const fs::path& path, int64_t prompts) {
  std::ifstream in(path);
  if (!in) return RuntimeError("--engine ray: the driver wrote no rows");
  std::vector<CorpusPrompt> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    PARITY_ASSIGN_OR_RETURN(CorpusPrompt p, WithContext(ParseCorpusRow(line), "--engine ray"));
    rows.push_back(std::move(p));
  }
  std::sort(rows.begin(), rows.end(), [](const CorpusPrompt& a, const CorpusPrompt& b) { return a.index < b.index; });
  for (int64_t p = 0; p < prompts; ++p)
    if (p >= static_cast<int64_t>(rows.size()) || rows[p].index != p)
      return RuntimeError(fmt::format("--engine ray: no row (or two) for prompt {}", p));
  if (static_cast<int64_t>(rows.size()) != prompts) return RuntimeError("--engine ray: more rows than prompts");
  return rows;
}

}  // namespace

Result<std::vector<CorpusPrompt>> RayCorpusRows(const RayEngineOptions& ray, const std::string& model,
                                                const std::string& corpus_dir, const RunConfig& target,
                                                int64_t prompts) {
  PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, WithContext(ScratchDir::Create("ray"), "--engine ray"));
  const fs::path tmp = scratch.path();
  std::string list;
  for (int64_t p = 0; p < prompts; ++p) list += FormatEntryRecord(static_cast<uint64_t>(p), corpus_dir) + "\n";
  PARITY_RETURN_IF_ERROR(WriteFileAtomic(tmp / "entries.jsonl", list));
  PARITY_RETURN_IF_ERROR(WriteJsonFile(tmp / "target.json", RunConfigToJson(target)));
  PARITY_ASSIGN_OR_RETURN(const DriverPython py, FindDriverPython(ray.python));
  PARITY_RETURN_IF_ERROR(RunRayDriver(DriverArgv(py, ray, model, corpus_dir, tmp), py.pythonpath, tmp));
  return ReadRows(tmp / "rows.txt", prompts);
}

}  // namespace parity
