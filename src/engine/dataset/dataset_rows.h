// The text form of a dataset row, exchanged between `parity dataset-worker`
// (a Ray actor's evaluator, docs/dataset.md) and the command that reads the
// rows back. Every double is written as a C99 hex float (%a), so a row read
// back is bit for bit the row computed. One line per sample, tab-separated:
//   R <entry> <sample> <id> then per cell:
//       <max_abs> <cosine> <snr_db> <mismatch_share> <score> <passed 0|1> <top1_rows> <top1_agree>
//   B <entry> <id> <error>          a bad sample (unreadable, mismatched, refused):
//                                   the worker protocol's failure line (core/worker_protocol.h)
// Names and errors have tabs and newlines replaced by spaces (a bad sample's
// id and error are cut at kMaxWorkerCellBytes).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "engine/dataset/dataset_result.h"

namespace parity {

std::string FormatDatasetRow(const DatasetRow& row);
std::string FormatDatasetBad(size_t entry, std::string_view id, std::string_view error);

// One parsed line: a row, or a bad sample (entry, id, error).
struct DatasetLine {
  std::optional<DatasetRow> row;
  size_t entry = 0;
  DatasetBadSample bad;
};

// Parses one line (without its newline) holding `cells` cells.
// kCorrupt naming what is wrong when it is not of the form above.
Result<DatasetLine> ParseDatasetLine(std::string_view line, size_t cells);

}  // namespace parity
