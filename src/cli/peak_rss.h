// Every command that holds a model states the memory it needed (issue 26):
// the process's peak resident set so far (engine/bench/latency.h
// PeakRssBytes: /proc/self/status VmHWM, else getrusage ru_maxrss), as
// "peak_rss_bytes" in its JSON report and a last console line.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

namespace parity::cli {

// `report` with "peak_rss_bytes" set (0 where the OS cannot say).
nlohmann::json WithPeakRss(nlohmann::json report);

// "peak RSS 412.3 MiB\n" to `out`.
void PrintPeakRss(std::FILE* out = stdout);

}  // namespace parity::cli
