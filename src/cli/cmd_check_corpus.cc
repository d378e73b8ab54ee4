// check --corpus / --prompts --torch-model (cli/corpus_cli.h): records the
// corpus when given prompts and a factory, runs it on the local engine (one
// session, every prompt in turn) or on Ray (engine/ray/corpus_ray.h), or, for an ORT GenAI package (a
// folder), through the GenAI runtime's own loop (engine/generate/genai_check.h),
// and reports.
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/corpus_cli.h"
#include "core/scratch_dir.h"
#include "engine/generate/corpus_recorder.h"
#include "engine/generate/genai_check.h"
#include "engine/ray/corpus_ray.h"
#include "engine/ray/driver_python.h"
#include "report/console/check_console.h"
#include "report/corpus_report.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace fs = std::filesystem;

namespace {

// `PY -m parity.torch corpus FACTORY --prompts P ... -o DIR` (engine/generate/corpus_recorder.h).
Status RecordCorpus(const CorpusCmdOptions& o, const std::string& ray_python, const fs::path& dir) {
  PARITY_ASSIGN_OR_RETURN(const DriverPython py, FindDriverPython(ray_python));
  fmt::print(stderr, "parity: recording PyTorch's decode of {} over {} ({} steps a prompt)\n", o.torch_model,
             o.prompts, o.generate);
  return RecordTorchCorpus({.python = py.python, .pythonpath = py.pythonpath, .torch_model = o.torch_model,
                            .prompts = o.prompts, .generate = o.generate, .top_k = o.top_k,
                            .output_names = o.output_names},
                           dir);
}

Result<std::vector<CorpusPrompt>> RunLocal(const std::string& model, const CorpusRecord& record, const RunConfig& target) {
  PARITY_ASSIGN_OR_RETURN(const CorpusSession corpus, CorpusSession::Open(model, target, record));
  std::vector<int64_t> all(record.prompts);
  for (int64_t p = 0; p < record.prompts; ++p) all[p] = p;
  ProgressBar bar(all.size());
  auto rows = RunCorpusPrompts(corpus.session(), record, all, [&bar](size_t done, size_t total) {
    bar.Update(done, fmt::format("prompt {}/{}", done, total));
  });
  bar.Finish();
  return rows;
}

// An ORT GenAI package (a folder): the runtime's own loop in its Python driver.
Result<std::vector<CorpusPrompt>> RunGenAi(const DatasetCmdOptions& engine, const std::string& package,
                                           const CorpusRecord& record, CorpusResult& r) {
  PARITY_ASSIGN_OR_RETURN(const DriverPython py, FindDriverPython(engine.ray_python));
  ProgressBar bar(static_cast<size_t>(record.prompts));
  GenAiRun run;
  auto rows = RunGenAiCorpus({.python = py.python, .pythonpath = py.pythonpath}, package, record, run,
                             [&bar](size_t done, size_t total) { bar.Update(done, fmt::format("prompt {}/{}", done, total)); });
  bar.Finish();
  if (rows) {
    r.config = run.config_path;
    r.genai = std::move(run);
  }
  return rows;
}

Status CheckArguments(const CorpusCmdOptions& o) {
  if (!o.corpus.empty() && (!o.prompts.empty() || !o.torch_model.empty()))
    return InvalidArgument("--corpus DIR is a recorded corpus: give it alone, or --prompts FILE --torch-model FACTORY");
  if (o.corpus.empty() && (o.prompts.empty() || o.torch_model.empty()))
    return InvalidArgument("--prompts FILE and --torch-model MODULE:FACTORY go together");
  if (std::isnan(o.kl_tolerance)) return InvalidArgument("--kl-tolerance: a number >= 0");
  return {};
}

Result<CorpusResult> Run(const CorpusCmdOptions& o, const DatasetCmdOptions& engine, const std::string& model,
                         const RunConfig& target, const fs::path& dir) {
  PARITY_ASSIGN_OR_RETURN(const CorpusRecord record, LoadCorpusRecord(dir));
  CorpusResult r{.model_path = model, .corpus_dir = o.corpus.empty() ? o.prompts : o.corpus,
                 .torch_model = record.model, .engine = engine.engine, .config = target.Label(),
                 .steps = record.steps, .top_k = record.top_k, .vocab = record.vocab,
                 .bytes_per_step = record.BytesPerStep()};
  ResolveCorpusTolerance(r, record, o.kl_tolerance);
  for (const auto& t : record.texts) r.texts.push_back(t.value_or(""));
  if (fs::is_directory(model)) {
    PARITY_ASSIGN_OR_RETURN(r.prompts, RunGenAi(engine, model, record, r));
  } else if (engine.engine == "ray") {
    PARITY_ASSIGN_OR_RETURN(r.prompts, RayCorpusRows(engine.Ray(), model, fs::absolute(dir).string(), target, record.prompts));
  } else {
    PARITY_ASSIGN_OR_RETURN(r.prompts, RunLocal(model, record, target));
  }
  SummarizeCorpus(r);
  return r;
}

}  // namespace

void AddCorpusOptions(CLI::App* cmd, CorpusCmdOptions* o) {
  cmd->add_option("--corpus", o->corpus,
                   "a prompt corpus recorded by python -m parity.torch corpus: every prompt teacher-forced on ORT, "
                   "KL and top-token agreement per step (docs/generation.md)");
  cmd->add_option("--prompts", o->prompts, "prompts, one JSON object a line ({\"input_ids\": [...], \"text\": ...}); "
                                           "with --torch-model");
  cmd->add_option("--torch-model", o->torch_model,
                  "MODULE:FACTORY of the step model (for an ORT GenAI package: the PyTorch model it was built from, as "
                  "a step), recorded over --prompts first");
  cmd->add_option("--generate", o->generate, "steps a prompt with --torch-model (default 32)")->check(CLI::Range(1, 65536));
  cmd->add_option("--top-k", o->top_k, "logits kept a step with --torch-model (default 64)")->check(CLI::Range(1, 65536));
  cmd->add_option("--output-names", o->output_names, "the step model's output names, for --torch-model");
  cmd->add_option("--kl-tolerance", o->kl_tolerance,
                  fmt::format("a prompt fails when a step's KL(PyTorch || ORT) is above it (default: {}x PyTorch's "
                              "own float32-vs-float64 KL over the corpus, at least {}; {} without calibration)",
                              kCorpusCalibrationFactor, kCorpusKlFloor, kDefaultCorpusKlTolerance))
      ->check(CLI::NonNegativeNumber);
}

int RunCorpusCheck(const CorpusCmdOptions& o, const DatasetCmdOptions& engine, const std::string& model,
                   const RunConfig& target, const std::string& report_dir, const std::string& json) {
  if (auto s = CheckArguments(o); !s) return ReportError(s.error());
  if (engine.engine != "local" && engine.engine != "ray")
    return ReportError(InvalidArgument(fmt::format("--engine {}: local or ray", engine.engine)).error());
  if (fs::is_directory(model)) {  // an ORT GenAI package: checked before PyTorch records anything
    if (auto s = CheckGenAiPackage(model); !s) return ReportError(s.error());
    if (engine.engine != "local")
      return ReportError(InvalidArgument("an ORT GenAI package runs on the local engine: give no --engine ray").error());
  }
  std::optional<ScratchDir> scratch;
  fs::path dir = o.corpus;
  if (dir.empty()) {
    auto made = ScratchDir::Create("corpus");
    if (!made) return ReportError(made.error());
    scratch.emplace(std::move(*made));
    dir = scratch->path() / "corpus";
    if (auto s = RecordCorpus(o, engine.ray_python, dir); !s) return ReportError(s.error());
  }
  auto result = Run(o, engine, model, target, dir);
  if (!result) return ReportError(result.error());
  fmt::print("{}", FormatCorpusSummary(*result));
  if (!report_dir.empty()) {
    if (auto s = WriteCorpusReport(*result, report_dir); !s) return ReportError(s.error());
    const fs::path d(report_dir);
    fmt::print("reports: {}, {}, {}\n", (d / "report.html").string(), (d / "report.json").string(),
               (d / "junit.xml").string());
  }
  if (!json.empty())
    if (auto s = WriteReportJson(json, CorpusResultToJson(*result)); !s) return ReportError(s.error());
  return result->pass ? 0 : 1;
}

}  // namespace parity::cli
