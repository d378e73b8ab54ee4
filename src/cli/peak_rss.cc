#include "cli/peak_rss.h"

#include <fmt/format.h>

#include "engine/bench/latency.h"

namespace parity::cli {

nlohmann::json WithPeakRss(nlohmann::json report) {
  report["peak_rss_bytes"] = PeakRssBytes();
  return report;
}

void PrintPeakRss(std::FILE* out) { fmt::print(out, "peak RSS {:.1f} MiB\n", PeakRssBytes() / 1048576.0); }

}  // namespace parity::cli
