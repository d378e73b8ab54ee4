#include "engine/dataset/dataset_rows.h"

#include <charconv>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "core/worker_protocol.h"

namespace parity {
namespace {

std::string Clean(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return out;
}

std::string Hex(double v) { return fmt::format("{:a}", v); }

std::vector<std::string_view> Split(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) return fields;
    start = tab + 1;
  }
}

bool ParseDouble(std::string_view s, double* out) {
  const std::string text(s);  // strtod reads hex floats, inf and nan
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

template <typename T>
bool ParseInt(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseCell(const std::vector<std::string_view>& f, size_t at, DatasetCell* c) {
  int passed = 0;
  return ParseDouble(f[at], &c->max_abs) && ParseDouble(f[at + 1], &c->cosine) && ParseDouble(f[at + 2], &c->snr_db) &&
         ParseDouble(f[at + 3], &c->mismatch_share) && ParseDouble(f[at + 4], &c->score) && ParseInt(f[at + 5], &passed) &&
         ParseInt(f[at + 6], &c->top1_rows) && ParseInt(f[at + 7], &c->top1_agree) && ((c->passed = passed == 1) || passed == 0);
}

}  // namespace

std::string FormatDatasetRow(const DatasetRow& row) {
  std::string s = fmt::format("R\t{}\t{}\t{}", row.entry, Clean(row.sample), Clean(row.id));
  for (const DatasetCell& c : row.cells)
    s += fmt::format("\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}", Hex(c.max_abs), Hex(c.cosine), Hex(c.snr_db),
                     Hex(c.mismatch_share), Hex(c.score), c.passed ? 1 : 0, c.top1_rows, c.top1_agree);
  return s;
}

std::string FormatDatasetBad(size_t entry, std::string_view id, std::string_view error) {
  return FormatFailedLine(entry, id, error);  // the worker protocol's failure line
}

Result<DatasetLine> ParseDatasetLine(std::string_view line, size_t cells) {
  DatasetLine out;
  if (auto failed = ParseWorkerLine(line); failed && failed->kind == WorkerLine::Kind::kFailed) {
    out.entry = failed->index;
    out.bad = {.id = std::move(failed->id), .error = std::move(failed->why)};
    return out;
  }
  const std::vector<std::string_view> f = Split(line);
  if (f.size() != 4 + 8 * cells || f[0] != "R" || !ParseInt(f[1], &out.entry))
    return Corrupt(fmt::format("dataset row: expected {} fields, got {}: '{}'", 4 + 8 * cells, f.size(),
                               line.substr(0, 80)));
  DatasetRow row{.id = std::string(f[3]), .entry = out.entry, .sample = std::string(f[2]),
                 .cells = std::vector<DatasetCell>(cells)};
  for (size_t k = 0; k < cells; ++k)
    if (!ParseCell(f, 4 + 8 * k, &row.cells[k]))
      return Corrupt(fmt::format("dataset row '{}': output {} is not numeric", row.id, k));
  out.row = std::move(row);
  return out;
}

}  // namespace parity
