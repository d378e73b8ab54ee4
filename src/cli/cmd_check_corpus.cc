// check --corpus / --prompts --torch-model (cli/corpus_cli.h): the options
// to the engine (engine/commands/corpus_command.h: record, run, summarize),
// its result to the console, --report DIR and --json FILE.
#include <filesystem>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/corpus_cli.h"
#include "cli/output.h"
#include "cli/terminal_progress.h"
#include "engine/commands/corpus_command.h"
#include "report/corpus_report.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace fs = std::filesystem;

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
  const CorpusRequest request{.model = model, .target = target, .corpus = o.corpus, .prompts = o.prompts,
                              .torch_model = o.torch_model, .output_names = o.output_names,
                              .generate = o.generate, .top_k = o.top_k, .kl_tolerance = o.kl_tolerance,
                              .engine = engine.engine, .ray = engine.Ray()};
  auto result = [&] {
    TerminalProgress progress;  // prompts done; erased before the summary
    return CheckCorpus(request, PrintNote);
  }();
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
