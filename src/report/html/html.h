// HTML writer of the check report: one self-contained page that works
// offline (its stylesheet, script, data and the uPlot charting library are
// all inside it; a Content-Security-Policy forbids any fetch). Order: the
// verdict, the failed tests with their reasons, then the details: per-sample
// and per-output metrics, the per-layer error curve, the locate summary,
// error histograms, latency distributions, stage findings, the PyTorch
// alignment and the environment.
//
// The tables are rendered here, so they read without JavaScript; the charts
// are drawn by the page's script from the data in
// <script type="application/json" id="parity-data">. Each chart container
// has data-chart="KIND" and gets data-rendered="true" once drawn; script
// errors are listed in #parity-errors (also window.__parityErrors).
#pragma once

#include <string>

#include "engine/check/check_result.h"

namespace parity {

// Never fails. All text from the report is escaped (names may hold `<`, `&`,
// quotes, "</script>" or invalid UTF-8).
std::string CheckReportToHtml(const CheckReport& report);

}  // namespace parity
