#include "engine/ray/dataset_worker.h"

#include <istream>
#include <ostream>

#include <fmt/format.h>

#include "core/worker_protocol.h"
#include "core/json_in.h"
#include "core/regular_file.h"
#include "engine/dataset/dataset.h"
#include "engine/dataset/dataset_eval.h"
#include "engine/dataset/dataset_reference.h"
#include "engine/dataset/dataset_rows.h"
#include "onnx/inspect.h"
#include "onnx/model.h"

namespace parity {
namespace {

Result<TolerancePolicy> ReadPolicy(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, kMaxConfigBytes));
  PARITY_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonBounded(text, path));
  return WithContext(TolerancePolicyFromJson(j), path);
}

// The evaluator's options, and the reference's config (`reference_config`),
// read from the files the driver wrote.
Result<DatasetEvalOptions> EvalOptions(const DatasetWorkerOptions& o, RunConfig& reference_config) {
  DatasetEvalOptions e{.label = o.model, .model_path = o.model, .allow_symlinks = o.allow_symlinks};
  PARITY_ASSIGN_OR_RETURN(e.target, LoadRunConfig(o.target_config));
  PARITY_ASSIGN_OR_RETURN(reference_config, LoadRunConfig(o.reference_config));
  PARITY_ASSIGN_OR_RETURN(e.policy, ReadPolicy(o.tolerance));
  if (o.threads > 0) e.target.intra_op_threads = reference_config.intra_op_threads = o.threads;
  return e;
}

}  // namespace

Status ServeDatasetWorker(const DatasetWorkerOptions& o, std::istream& in, std::ostream& out) {
  RunConfig reference_config;
  PARITY_ASSIGN_OR_RETURN(const DatasetEvalOptions options, EvalOptions(o, reference_config));
  const DatasetReference reference =
      DatasetReference::FromWorker(std::move(reference_config), o.reference_model, o.reference_outputs);
  PARITY_ASSIGN_OR_RETURN(const Model model, Model::Load(o.model));
  PARITY_ASSIGN_OR_RETURN(const ReferenceModel reference_model, reference.LoadModel());
  PARITY_ASSIGN_OR_RETURN(DatasetEvaluator evaluator, DatasetEvaluator::Create(model, reference_model, reference, options));
  const ModelInfo info = Inspect(model);
  out << FormatReadyLine({std::to_string(evaluator.outputs().size())}) << std::endl;
  std::string line;
  for (bool too_long = false; ReadBoundedLine(in, line, kMaxEntryRecordBytes, too_long);) {
    // Anything but the driver's records ends the worker with one line (the
    // driver sees it exit) rather than an exception.
    if (too_long)
      return InvalidArgument(fmt::format("dataset-worker: a request line longer than {} bytes", kMaxEntryRecordBytes));
    PARITY_ASSIGN_OR_RETURN(const EntryRecord record, WithContext(ParseEntryRecord(line), "dataset-worker"));
    const size_t index = record.index;
    DatasetEntryResult r = EvaluateDatasetEntry(evaluator, info, record.path, index, o.model);
    for (const DatasetRow& row : r.rows) out << FormatDatasetRow(row) << '\n';
    for (const DatasetBadSample& b : r.bad) out << FormatDatasetBad(index, b.id, b.error) << '\n';
    out << FormatDoneLine(index) << std::endl;
  }
  return {};
}

}  // namespace parity
