// parity dataset-worker MODEL (hidden): the evaluator of one Ray actor
// (python/parity/_ray_engine.py, docs/dataset.md). It creates the two
// sessions once, then reads entry records on stdin, one a line
// (core/entry_record.h: the driver forwards the command's entry
// list) and answers each with the entry's rows (engine/dataset/dataset_rows.h)
// and "E<TAB>INDEX". A line longer than a record may be, or one that is no
// record, ends it with one line, exit 2.
// The first line it writes, "O<TAB>N", says the sessions exist. Being the
// local engine's own code (EvaluateDatasetEntry), its rows are bit for bit
// the local engine's.
#include <iostream>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/dataset_cli.h"
#include "core/json_in.h"
#include "core/regular_file.h"
#include "engine/dataset/dataset_rows.h"
#include "core/entry_record.h"

namespace parity::cli {
namespace {

struct WorkerOptions {
  std::string model, reference_model, target_config, reference_config, tolerance, reference_outputs;
  int threads = 0;
  bool allow_symlinks = false;
  std::vector<std::string> ep_libraries;  // the driver's: the same ORT and EPs in every actor
  std::string ort_library;
};

Result<TolerancePolicy> ReadPolicy(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, kMaxConfigBytes));
  PARITY_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonBounded(text, path));
  return WithContext(TolerancePolicyFromJson(j), path);
}

Result<DatasetEvalOptions> EvalOptions(const WorkerOptions& o) {
  DatasetEvalOptions e{.label = o.model, .model_path = o.model, .reference_outputs = o.reference_outputs,
                       .allow_symlinks = o.allow_symlinks};
  PARITY_ASSIGN_OR_RETURN(e.target, LoadRunConfig(o.target_config));
  PARITY_ASSIGN_OR_RETURN(e.reference.config, LoadRunConfig(o.reference_config));
  PARITY_ASSIGN_OR_RETURN(e.policy, ReadPolicy(o.tolerance));
  if (!o.reference_model.empty()) {
    e.reference.kind = Reference::Kind::kModel;
    e.reference.path = o.reference_model;
  }
  if (o.threads > 0) e.target.intra_op_threads = e.reference.config.intra_op_threads = o.threads;
  return e;
}

int RunWorker(const WorkerOptions& o) {
  if (auto s = UseEpLibraries(o.ep_libraries, o.ort_library); !s) return ReportError(s.error());
  auto options = EvalOptions(o);
  if (!options) return ReportError(options.error());
  auto model = Model::Load(o.model);
  if (!model) return ReportError(model.error());
  std::optional<Model> reference;
  if (!o.reference_model.empty()) {
    auto m = Model::Load(o.reference_model);
    if (!m) return ReportError(m.error());
    reference.emplace(std::move(*m));
  }
  auto evaluator = DatasetEvaluator::Create(*model, reference ? &*reference : nullptr, *options);
  if (!evaluator) return ReportError(evaluator.error());
  const ModelInfo info = Inspect(*model);
  std::cout << "O\t" << evaluator->outputs().size() << std::endl;
  std::string line;
  for (bool too_long = false; ReadBoundedLine(std::cin, line, kMaxEntryRecordBytes, too_long);) {
    // Anything but the driver's records ends the worker with one line (the
    // driver sees it exit) rather than an exception.
    if (too_long)
      return ReportError(InvalidArgument(fmt::format("dataset-worker: a request line longer than {} bytes",
                                                     kMaxEntryRecordBytes)).error());
    auto record = ParseEntryRecord(line);
    if (!record) return ReportError(WithContext(std::move(record), "dataset-worker").error());
    const size_t index = record->index;
    DatasetEntryResult r = EvaluateDatasetEntry(*evaluator, info, record->path, index, o.model);
    for (const DatasetRow& row : r.rows) std::cout << FormatDatasetRow(row) << '\n';
    for (const DatasetBadSample& b : r.bad) std::cout << FormatDatasetBad(index, b.id, b.error) << '\n';
    std::cout << "E\t" << index << std::endl;
  }
  return 0;
}

}  // namespace

void RegisterDatasetWorker(CLI::App& app) {
  auto o = std::make_shared<WorkerOptions>();
  auto* cmd = app.add_subcommand("dataset-worker", "");  // hidden: an empty description leaves it out of --help
  cmd->group("");
  cmd->add_option("model", o->model)->required();
  cmd->add_option("--reference-model", o->reference_model);
  cmd->add_option("--target-config", o->target_config)->required();
  cmd->add_option("--reference-config", o->reference_config)->required();
  cmd->add_option("--tolerance-policy", o->tolerance)->required();
  cmd->add_option("--threads", o->threads);
  cmd->add_option("--reference-outputs", o->reference_outputs);
  cmd->add_flag("--allow-symlinks", o->allow_symlinks);
  AddEpLibraryOption(cmd, &o->ep_libraries, &o->ort_library);
  cmd->callback([o] { ExitCode() = RunWorker(*o); });
}

}  // namespace parity::cli
