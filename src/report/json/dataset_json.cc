// parity.dataset/1 (docs/dataset.schema.json).
#include <fmt/format.h>

#include "core/run_config.h"
#include "engine/run/environment_json.h"
#include "report/dataset_report.h"
#include "report/json/json_helpers.h"

namespace parity {
namespace {

using nlohmann::json;

json QuantilesJson(const DatasetQuantiles& q) {
  return {{"min", JsonNumber(q.min)}, {"p1", JsonNumber(q.p1)},   {"p10", JsonNumber(q.p10)},
          {"p50", JsonNumber(q.p50)}, {"p90", JsonNumber(q.p90)}, {"p99", JsonNumber(q.p99)},
          {"max", JsonNumber(q.max)}, {"mean", JsonNumber(q.mean)}};
}

json OutputJson(const DatasetOutputSummary& s) {
  json j = {{"name", s.name},
            {"failed", s.failed},
            {"quantiles",
             {{"max_abs", QuantilesJson(s.max_abs)},
              {"cosine", QuantilesJson(s.cosine)},
              {"snr_db", QuantilesJson(s.snr_db)},
              {"mismatch_share", QuantilesJson(s.mismatch_share)},
              {"score", QuantilesJson(s.score)}}},
            {"histogram", {{"first_decade", kDatasetHistogramFirstDecade}, {"counts", s.histogram}}},
            {"top1_agreement", nullptr},
            {"flipped", nullptr}};
  if (s.classifier) {
    j["top1_agreement"] = s.top1_agreement();
    j["top1_rows"] = s.top1_rows;
    j["flipped"] = s.flipped;
  }
  return j;
}

json CellJson(const DatasetCell& c) {
  json j = {{"max_abs", JsonNumber(c.max_abs)}, {"cosine", JsonNumber(c.cosine)},
            {"snr_db", JsonNumber(c.snr_db)},   {"mismatch_share", JsonNumber(c.mismatch_share)},
            {"score", JsonNumber(c.score)},     {"passed", c.passed}};
  if (c.top1_rows > 0) j["flipped"] = c.flipped();
  return j;
}

json LocatedJson(const DatasetLocated& l) {
  json j = {{"id", l.id}, {"worst", l.worst}, {"flipped", l.flipped}, {"first_divergence", nullptr},
            {"node", JsonStringOrNull(l.node)}, {"module", JsonStringOrNull(l.module)}, {"error", JsonStringOrNull(l.error)}};
  if (l.first)
    j["first_divergence"] = {{"tensor", l.first->tensor}, {"producer", l.first->producer},
                             {"fused_node", l.first->fused_node}, {"op_type", l.first->op_type},
                             {"covers", l.first->covers}};
  return j;
}

json RankingJson(const DatasetReport& r) {
  json a = json::array();
  for (const DatasetRankEntry& e : r.ranking)
    a.push_back({{"fused_node", e.fused_node}, {"op_type", e.op_type}, {"node", JsonStringOrNull(e.node)},
                 {"covers", e.covers}, {"samples", e.samples}, {"flips", e.flips}, {"ids", e.ids}});
  return a;
}

json ModuleRankingJson(const DatasetReport& r) {
  json a = json::array();
  for (const DatasetModuleRank& e : r.module_ranking)
    a.push_back({{"module", e.module}, {"samples", e.samples}, {"flips", e.flips}, {"ids", e.ids}});
  return a;
}

json RowsJson(const DatasetReport& r) {
  json rows = json::array();
  for (const DatasetRow& row : r.rows) {
    json cells = json::object();
    for (size_t k = 0; k < row.cells.size() && k < r.outputs.size(); ++k) cells[r.outputs[k]] = CellJson(row.cells[k]);
    rows.push_back({{"id", row.id}, {"outputs", std::move(cells)}});
  }
  return rows;
}

}  // namespace

json DatasetReportToJson(const DatasetReport& r) {
  json outputs = json::array(), worst = json::array(), located = json::array(), bad = json::array();
  for (const auto& s : r.summaries) outputs.push_back(OutputJson(s));
  for (const auto& w : r.worst)
    worst.push_back({{"id", w.id}, {"output", w.output}, {"score", JsonNumber(w.score)},
                     {"max_abs", JsonNumber(w.max_abs)}, {"cosine", JsonNumber(w.cosine)},
                     {"snr_db", JsonNumber(w.snr_db)}});
  for (const auto& l : r.located) located.push_back(LocatedJson(l));
  for (const auto& b : r.bad) bad.push_back({{"id", b.id}, {"error", b.error}});
  json notes = r.notes;
  const bool rows = r.rows.size() <= kMaxDatasetRowsInJson;
  if (!rows) notes.push_back(fmt::format("the per-sample rows are left out: more than {}", kMaxDatasetRowsInJson));
  return {{"schema", "parity.dataset/1"},
          {"tool_version", r.tool_version},
          {"verdict", OverallVerdictName(r.overall)},
          {"engine", r.engine},
          {"model", r.model},
          {"reference", r.reference},
          {"target", RunConfigToJson(r.target)},
          {"tolerance", TolerancePolicyToJson(r.tolerance)},
          {"source", r.source},
          {"count", r.count},
          {"skipped", r.skipped},
          {"bad_samples", std::move(bad)},
          {"seconds", JsonNumber(r.seconds)},
          {"outputs", std::move(outputs)},
          {"worst", std::move(worst)},
          {"flipped_samples", r.flips_total},
          {"locate", {{"worst_k", r.locate_worst}, {"flip_cap", r.locate_flip_cap}, {"samples", std::move(located)}}},
          {"ranking", RankingJson(r)},
          {"headline", JsonStringOrNull(DatasetHeadline(r))},
          {"module_ranking", ModuleRankingJson(r)},
          {"module_headline", JsonStringOrNull(DatasetModuleHeadline(r))},
          {"retried", {{"samples", r.retried}, {"entries", r.retried_entries}}},
          {"samples", rows ? RowsJson(r) : json(nullptr)},
          {"notes", std::move(notes)},
          {"env", EnvironmentToJson(r.env)}};
}

}  // namespace parity
