// parity fix MODEL [the check's flags]: the smallest change that makes the
// failing check pass, found from its localization and verified by checking
// again (engine/fix/fix.h, docs/fix.md). Exit 0: nothing to fix, or a fix
// found and verified; 1: no fix within the budget; 2: bad input; 3: the
// runtime failed.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>

#include "cli/command.h"
#include "cli/fix_cli.h"
#include "cli/output.h"
#include "engine/ray/driver_python.h"
#include "cli/sample_flags.h"
#include "engine/fix/fix.h"
#include "report/fix_report.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace {

struct FixCmdOptions {
  std::string model, reference_model, reference_config, inputs, out = "parity-fix", json, python;
  std::vector<std::string> calibration;
  uint32_t seed = 0;
  int runs = 20, warmup = 3, budget = 24;
  double latency_seconds = 2.0;
  SampleFlags samples;
  ConfigOptions target;
  ToleranceOptions tolerance;
  std::vector<std::string> check_args;  // the check's flags as given (cmd_fix's own left out)
};

// The flags the user gave that `parity check` takes too, to repeat them.
std::vector<std::string> CheckArgs(const CLI::App& cmd) {
  static const std::set<std::string> kOwn = {"--out", "--json", "--budget", "--calibration", "--python"};
  std::vector<std::string> args;
  for (const CLI::Option* opt : cmd.get_options()) {
    const std::string name = opt->get_name(false, true);
    if (opt->count() == 0 || opt->get_positional() || kOwn.contains(name) || name.empty()) continue;
    const std::string flag = opt->get_lnames().empty() ? "-" + opt->get_snames().front() : "--" + opt->get_lnames().front();
    if (opt->get_expected_min() == 0) { args.push_back(flag); continue; }
    for (const auto& v : opt->results()) args.insert(args.end(), {flag, v});
  }
  return args;
}

// The Python that re-makes a derived copy (engine/ray/driver_python.h).
Status ResolvePython(const FixCmdOptions& o, FixOptions& options) {
  auto found = FindDriverPython(o.python);
  if (!found) {  // its message names the Ray engine's flag
    std::string m = found.error().message();
    for (auto [from, to] : {std::pair{"--engine ray: ", "fix: "}, std::pair{"--ray-python", "--python"}})
      if (auto at = m.find(from); at != std::string::npos) m.replace(at, std::string_view(from).size(), to);
    return InvalidArgument(m);
  }
  options.python = PythonPath(found->python);
  options.pythonpath = found->pythonpath;
  return {};
}

int RunFix(const FixCmdOptions& o) {
  FixOptions options;
  CheckOptions& c = options.check;
  c.model_path = o.model;
  c.inputs_path = o.inputs;
  c.seed = o.seed;
  c.latency_runs = o.runs;
  c.latency_warmup = o.warmup;
  c.latency_seconds = o.latency_seconds;
  if (auto s = ResolveSampleFlags(o.samples, c.generate); !s) return ReportError(s.error());
  auto target = ResolveConfig(o.target, "all");
  if (!target) return ReportError(target.error());
  c.target = *target;
  if (!o.reference_config.empty()) {
    auto r = ConfigFromLevelOrFile(o.reference_config, "--reference-config");
    if (!r) return ReportError(r.error());
    c.reference.config = *r;
  }
  if (!o.reference_model.empty()) {
    c.reference.kind = Reference::Kind::kModel;
    c.reference.path = o.reference_model;
    if (auto s = ResolvePython(o, options); !s) return ReportError(s.error());
  }
  auto policy = ResolveTolerance(o.tolerance);
  if (!policy) return ReportError(policy.error());
  c.policy = *policy;
  if (auto s = CheckOutputsApart({{"--out", o.out}, {"--json", o.json}}); !s) return ReportError(s.error());
  if (auto s = CheckOutputPath(o.out, "--out", /*directory=*/true); !s) return ReportError(s.error());
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  options.out_dir = o.out;
  options.budget_runs = o.budget;
  options.calibration = o.calibration;
  options.check_args = o.check_args;
  // One counter for every copy of the callback (the search and the level fallback each hold one).
  options.on_probe = [n = std::make_shared<int>(0)](const SearchProbe& p) {
    std::fprintf(stderr, "parity: fix: check %d [%s] %zu name(s): %s (%.1f s)\n", ++*n, p.phase.c_str(),
                 p.change.size(), p.passed ? "pass" : "fail", p.seconds);
  };
  auto result = Fix(options);
  if (!result) return ReportError(result.error());
  PrintFixSummary(*result, stdout);
  if (!o.json.empty())
    if (auto s = WriteReportJson(o.json, FixResultToJson(*result)); !s) return ReportError(s.error());
  return !result->needed || result->found ? 0 : 1;
}

}  // namespace

void RegisterFix(CLI::App& app) {
  auto o = std::make_shared<FixCmdOptions>();
  auto* cmd = app.add_subcommand(
      "fix", "find the smallest change that makes a failing check pass (nodes kept in float, optimizers off, EP "
             "options), verified by checking again; takes the check's flags");
  cmd->add_option("model", o->model, "the deployed .onnx model (the derived int8/float16 copy, or the model)")->required();
  cmd->add_option("--reference-model", o->reference_model, "the float model the copy was made from");
  cmd->add_option("--reference-config", o->reference_config, "the reference config: a level or CONFIG.json (default disable)");
  cmd->add_option("--inputs", o->inputs, "samples to check with (.npz with SAMPLE/INPUT keys, ...); default: generated");
  cmd->add_option("--seed", o->seed, "seed for generated samples");
  AddSampleFlags(cmd, &o->samples);
  cmd->add_option("--runs", o->runs, "timed runs per config for the cost (default 20)")->check(Positive());
  cmd->add_option("--warmup", o->warmup, "untimed warm-up runs (default 3)")->check(NonNegative());
  cmd->add_option("--latency-seconds", o->latency_seconds, "time budget of the timed runs per config")->check(Positive());
  cmd->add_option("--out", o->out, "where the fixed model or config is written (default parity-fix/; never overwritten)");
  cmd->add_option("--json", o->json, "write the parity.fix/1 report here");
  cmd->add_option("--budget", o->budget, "checks the search may run (default 24)")->check(Positive());
  cmd->add_option("--calibration", o->calibration,
                  "calibration samples for re-quantizing an int8 copy (.npz or a folder of them; default: --inputs)");
  cmd->add_option("--python", o->python, "the Python with onnxruntime that re-makes a derived copy "
                                         "(default: $PARITY_PYTHON, else the package's)");
  AddConfigOptions(cmd, &o->target, "all");
  AddToleranceOptions(cmd, &o->tolerance);
  cmd->callback([o, cmd] {
    o->check_args = CheckArgs(*cmd);
    ExitCode() = RunFix(*o);
  });
}

}  // namespace parity::cli
