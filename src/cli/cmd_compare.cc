// parity compare REF TEST: compares two tensor sets (.npz, .npy, a directory
// of .npy or .pb files) with a tolerance policy; a table worst-first, --json.
#include <cstdio>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/output.h"
#include "compare/compare_sets.h"
#include "core/json_out.h"
#include "engine/run/environment.h"
#include "engine/run/tensor_source.h"
#include "report/json/compare_json.h"
#include "report/console/console_table.h"
#include "report/json/env_json.h"
#include "report/report_writer.h"

namespace parity::cli {
namespace {

struct CompareCmdOptions {
  std::string reference;
  std::string test;
  std::string noise;
  std::vector<std::string> maps;
  std::string json;
  bool allow_extra = false;
  int threads = 0;
  ToleranceOptions tolerance;
};

int RunCompare(const CompareCmdOptions& o) {
  auto policy = ResolveTolerance(o.tolerance);
  if (!policy) return ReportError(policy.error());
  CompareOptions options;
  options.policy = *policy;
  options.allow_extra_in_test = o.allow_extra;
  options.threads = o.threads;
  for (const auto& spec : o.maps) {
    auto pair = ParseRename(spec);
    if (!pair) return ReportError(pair.error().With("--map"));
    options.rename[pair->first] = pair->second;
  }
  if (auto s = CheckOutputPath(o.json, "--json"); !s) return ReportError(s.error());
  auto reference = LoadTensors(o.reference);
  if (!reference) return ReportError(reference.error());
  auto test = LoadTensors(o.test);
  if (!test) return ReportError(test.error());
  // Two lone .npy files are one tensor each: compare them whatever their names.
  const auto is_npy = [](const std::string& p) { return p.size() > 4 && p.ends_with(".npy"); };
  if (is_npy(o.reference) && is_npy(o.test) && options.rename.empty() && reference->size() == 1 &&
      test->size() == 1 && (*reference)[0].name != (*test)[0].name)
    options.rename[(*reference)[0].name] = (*test)[0].name;
  TensorSet noise;
  if (!o.noise.empty()) {
    auto loaded = LoadTensors(o.noise);
    if (!loaded) return ReportError(loaded.error());
    noise = std::move(*loaded);
    options.noise_reference = &noise;
    if (o.tolerance.mode.empty()) options.policy.mode = ToleranceMode::kCalibrated;
  } else if (options.policy.mode == ToleranceMode::kCalibrated) {
    return ReportError(Error(ErrorCode::kInvalidArgument,
                             "--mode calibrated needs --noise: a second reference that should agree with REF"));
  }
  auto result = CompareSets(*reference, *test, options);
  if (!result) return ReportError(result.error());

  ConsoleStyle style;
  style.color = StdoutWantsColor();
  std::fputs(FormatComparisonTable(*result, style).c_str(), stdout);
  size_t failed = 0, unchecked = 0;
  for (const auto& t : result->tensors) {
    failed += t.status == Verdict::kFail;
    unchecked += t.status == Verdict::kUnchecked;
  }
  // Two empty sets compared nothing: NOT JUDGED (exit 4), never PASS.
  const bool nothing = result->passed() && result->tensors.empty();
  fmt::print("{}: {} tensor(s), {} failed, {} unchecked, {} structural finding(s){}\n",
             nothing ? "NOT JUDGED" : result->passed() ? "PASS" : "FAIL", result->tensors.size(), failed, unchecked,
             result->findings.size(), nothing ? "; nothing was compared" : "");
  if (!o.json.empty()) {
    const auto j = CompareReportToJson(*result, o.reference, o.test, o.noise, options.policy,
                                       EnvironmentToJson(CurrentEnvironment()));
    if (auto s = WriteReportJson(o.json, j); !s) return ReportError(s.error());
  }
  return nothing ? 4 : result->passed() ? 0 : 1;
}

}  // namespace

void RegisterCompare(CLI::App& app) {
  auto o = std::make_shared<CompareCmdOptions>();
  auto* cmd = app.add_subcommand("compare", "compare two tensor sets with a tolerance policy");
  cmd->add_option("reference", o->reference, "the reference tensors (.npz, .npy, or a directory of .npy/.pb)")
      ->required();
  cmd->add_option("test", o->test, "the tensors to judge")->required();
  cmd->add_option("--noise", o->noise,
                  "a second reference that should agree with REF (fp64 run, re-run): its difference from REF is "
                  "the noise floor of --mode calibrated");
  cmd->add_option("--map", o->maps, "compare reference tensor A with test tensor B: A=B (repeatable)");
  cmd->add_flag("--allow-extra", o->allow_extra, "tensors only in TEST are reported but do not fail");
  cmd->add_option("--threads", o->threads, "threads for large tensors (0: choose)")->check(NonNegative());
  cmd->add_option("--json", o->json, "also write the result as JSON to FILE (schema parity.compare/1)");
  AddToleranceOptions(cmd, &o->tolerance);
  cmd->callback([o] { ExitCode() = RunCompare(*o); });
}

}  // namespace parity::cli
