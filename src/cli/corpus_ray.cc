// The corpus check on Ray (cli/corpus_cli.h): the prompts are the entries of
// the Ray driver check --dataset uses (python/parity/_ray_engine.py: Ray Data
// map_batches over an actor pool), each actor running `parity corpus-worker`,
// which opens the model once and answers each prompt's index with its row
// (RunCorpusPrompt, the local engine's own code: the same numbers).
#include <algorithm>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/corpus_cli.h"
#include "cli/ray_python.h"
#include "core/atomic_file.h"
#include "core/entry_record.h"
#include "core/json_out.h"
#include "core/scratch_dir.h"
#include "engine/run/environment.h"

namespace parity::cli {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> DriverArgv(const DriverPython& py, const DatasetCmdOptions& c, const std::string& model,
                                    const std::string& corpus_dir, const fs::path& tmp) {
  std::vector<std::string> argv = {py.python, "-m", "parity._ray_engine", "--entries", (tmp / "entries.jsonl").string(),
                                   "--out", (tmp / "rows.txt").string(), "--actors", std::to_string(c.ray_actors),
                                   "--progress"};
  if (!c.ray_address.empty())
    argv.insert(argv.end(), {"--address", c.ray_address});
  else
    argv.insert(argv.end(), {"--temp-dir", (tmp / "ray").string()});
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  argv.insert(argv.end(), {"--", ec ? "parity" : self.string(), "corpus-worker", fs::absolute(model).string(), "--corpus",
                           corpus_dir, "--target-config", (tmp / "target.json").string(), "--ort-library",
                           CurrentOrt().library});
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

Result<std::vector<CorpusPrompt>> RayCorpusRows(const DatasetCmdOptions& c, const std::string& model,
                                                const std::string& corpus_dir, const RunConfig& target, int64_t prompts) {
  PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, WithContext(ScratchDir::Create("ray"), "--engine ray"));
  const fs::path tmp = scratch.path();
  std::string list;
  for (int64_t p = 0; p < prompts; ++p) list += FormatEntryRecord(static_cast<uint64_t>(p), corpus_dir) + "\n";
  PARITY_RETURN_IF_ERROR(WriteFileAtomic(tmp / "entries.jsonl", list));
  PARITY_RETURN_IF_ERROR(WriteJsonFile(tmp / "target.json", RunConfigToJson(target)));
  PARITY_ASSIGN_OR_RETURN(const DriverPython py, FindDriverPython(c.ray_python));
  PARITY_RETURN_IF_ERROR(RunRayDriver(DriverArgv(py, c, model, corpus_dir, tmp), py.pythonpath, tmp));
  return ReadRows(tmp / "rows.txt", prompts);
}

namespace {

struct WorkerOptions {
  std::string model, corpus, target_config;
  int threads = 0;
  std::vector<std::string> ep_libraries;
  std::string ort_library;
};

int RunWorker(const WorkerOptions& o) {
  if (auto s = UseEpLibraries(o.ep_libraries, o.ort_library); !s) return ReportError(s.error());
  auto record = LoadCorpusRecord(o.corpus);
  if (!record) return ReportError(record.error());
  auto config = LoadRunConfig(o.target_config);
  if (!config) return ReportError(config.error());
  if (o.threads > 0) config->intra_op_threads = o.threads;
  auto session = CorpusSession::Open(o.model, *config, *record);
  if (!session) return ReportError(session.error());
  std::cout << "O\t0" << std::endl;
  std::string line;
  for (bool too_long = false; ReadBoundedLine(std::cin, line, kMaxEntryRecordBytes, too_long);) {
    if (too_long) return ReportError(InvalidArgument("corpus-worker: a request line too long").error());
    auto entry = ParseEntryRecord(line);
    if (!entry) return ReportError(WithContext(std::move(entry), "corpus-worker").error());
    const auto index = static_cast<int64_t>(entry->index);
    if (index >= record->prompts)
      return ReportError(InvalidArgument(fmt::format("corpus-worker: prompt {} is not in the corpus", index)).error());
    auto row = session->Run(index);
    if (!row) return ReportError(row.error());
    std::cout << FormatCorpusRow(*row) << '\n' << "E\t" << index << std::endl;
  }
  return 0;
}

}  // namespace

void RegisterCorpusWorker(CLI::App& app) {
  auto o = std::make_shared<WorkerOptions>();
  auto* cmd = app.add_subcommand("corpus-worker", "");  // hidden
  cmd->group("");
  cmd->add_option("model", o->model)->required();
  cmd->add_option("--corpus", o->corpus)->required();
  cmd->add_option("--target-config", o->target_config)->required();
  cmd->add_option("--threads", o->threads);
  AddEpLibraryOption(cmd, &o->ep_libraries, &o->ort_library);
  cmd->callback([o] { ExitCode() = RunWorker(*o); });
}

}  // namespace parity::cli
