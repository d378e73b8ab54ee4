#include "engine/commands/corpus_command.h"

#include <cmath>
#include <filesystem>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/progress.h"
#include "core/scratch_dir.h"
#include "engine/generate/corpus_recorder.h"
#include "engine/generate/genai_check.h"
#include "engine/ray/corpus_ray.h"
#include "engine/ray/driver_python.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

void PromptDone(size_t done, size_t total) { ReportProgress(fmt::format("prompt {}/{}", done, total), done, total); }

// `PY -m parity.torch corpus FACTORY --prompts P ... -o DIR` (engine/generate/corpus_recorder.h).
Status RecordCorpus(const CorpusRequest& r, const fs::path& dir, const NoteSink& note) {
  PARITY_ASSIGN_OR_RETURN(const DriverPython py, FindDriverPython(r.ray.python));
  if (note)
    note(fmt::format("recording PyTorch's decode of {} over {} ({} steps a prompt)", r.torch_model, r.prompts,
                     r.generate));
  return RecordTorchCorpus({.python = py.python, .pythonpath = py.pythonpath, .torch_model = r.torch_model,
                            .prompts = r.prompts, .generate = r.generate, .top_k = r.top_k,
                            .output_names = r.output_names},
                           dir);
}

Result<std::vector<CorpusPrompt>> RunLocal(const std::string& model, const CorpusRecord& record, const RunConfig& target) {
  PARITY_ASSIGN_OR_RETURN(const CorpusSession corpus, CorpusSession::Open(model, target, record));
  std::vector<int64_t> all(record.prompts);
  for (int64_t p = 0; p < record.prompts; ++p) all[p] = p;
  return RunCorpusPrompts(corpus.session(), record, all, PromptDone);
}

// An ORT GenAI package (a folder): the runtime's own loop in its Python driver.
Result<std::vector<CorpusPrompt>> RunGenAi(const CorpusRequest& req, const CorpusRecord& record, CorpusResult& r) {
  PARITY_ASSIGN_OR_RETURN(const DriverPython py, FindDriverPython(req.ray.python));
  GenAiRun run;
  auto rows = RunGenAiCorpus({.python = py.python, .pythonpath = py.pythonpath}, req.model, record, run, PromptDone);
  if (rows) {
    r.config = run.config_path;
    r.genai = std::move(run);
  }
  return rows;
}

Status CheckRequest(const CorpusRequest& r) {
  if (!r.corpus.empty() && (!r.prompts.empty() || !r.torch_model.empty()))
    return InvalidArgument("--corpus DIR is a recorded corpus: give it alone, or --prompts FILE --torch-model FACTORY");
  if (r.corpus.empty() && (r.prompts.empty() || r.torch_model.empty()))
    return InvalidArgument("--prompts FILE and --torch-model MODULE:FACTORY go together");
  if (std::isnan(r.kl_tolerance)) return InvalidArgument("--kl-tolerance: a number >= 0");
  if (r.engine != "local" && r.engine != "ray") return InvalidArgument(fmt::format("--engine {}: local or ray", r.engine));
  if (fs::is_directory(r.model)) {  // an ORT GenAI package: checked before PyTorch records anything
    PARITY_RETURN_IF_ERROR(CheckGenAiPackage(r.model));
    if (r.engine != "local") return InvalidArgument("an ORT GenAI package runs on the local engine: give no --engine ray");
  }
  return {};
}

Result<CorpusResult> Run(const CorpusRequest& req, const fs::path& dir) {
  PARITY_ASSIGN_OR_RETURN(const CorpusRecord record, LoadCorpusRecord(dir));
  CorpusResult r{.model_path = req.model, .corpus_dir = req.corpus.empty() ? req.prompts : req.corpus,
                 .torch_model = record.model, .engine = req.engine, .config = req.target.Label(),
                 .steps = record.steps, .top_k = record.top_k, .vocab = record.vocab,
                 .bytes_per_step = record.BytesPerStep()};
  ResolveCorpusTolerance(r, record, req.kl_tolerance);
  for (const auto& t : record.texts) r.texts.push_back(t.value_or(""));
  if (fs::is_directory(req.model)) {
    PARITY_ASSIGN_OR_RETURN(r.prompts, RunGenAi(req, record, r));
  } else if (req.engine == "ray") {
    PARITY_ASSIGN_OR_RETURN(r.prompts, RayCorpusRows(req.ray, req.model, fs::absolute(dir).string(), req.target,
                                                     record.prompts));
  } else {
    PARITY_ASSIGN_OR_RETURN(r.prompts, RunLocal(req.model, record, req.target));
  }
  SummarizeCorpus(r);
  return r;
}

}  // namespace

Result<CorpusResult> CheckCorpus(const CorpusRequest& request, const NoteSink& note) {
  PARITY_RETURN_IF_ERROR(CheckRequest(request));
  std::optional<ScratchDir> scratch;
  fs::path dir = request.corpus;
  if (dir.empty()) {
    PARITY_ASSIGN_OR_RETURN(auto made, ScratchDir::Create("corpus"));
    scratch.emplace(std::move(made));
    dir = scratch->path() / "corpus";
    PARITY_RETURN_IF_ERROR(RecordCorpus(request, dir, note));
  }
  return Run(request, dir);
}

}  // namespace parity
