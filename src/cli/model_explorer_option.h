// --model-explorer DIR on check, locate, align and check --dataset: the
// node-data files of report/overlays/model_explorer.h, written whole into DIR.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/status.h"
#include "engine/check/check_result.h"
#include "report/overlays/model_explorer.h"

namespace parity::cli {

void AddModelExplorerOption(CLI::App* cmd, std::string* dir);

// Before anything runs: DIR may be written (new, empty or an earlier
// --model-explorer folder). Empty: the option was not given.
Status CheckModelExplorerOption(const std::string& dir);

// Reads MODEL's graph (structure only) for the adapter's node ids, writes the
// folder and prints where it went. `links`, when given, is filled for the
// HTML report (its `href_dir` relative to `report_dir` when that is given).
// Empty dir: does nothing.
Status WriteModelExplorerOption(const std::string& dir, ModelExplorerInput in,
                                std::optional<ModelExplorerLinks>* links = nullptr,
                                const std::string& report_dir = "");

}  // namespace parity::cli
