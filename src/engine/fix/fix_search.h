// The search of `parity fix` (fix.h) over sets of names (nodes, optimizers,
// provider options), independent of what a name changes: start at the
// seeds, grow along the graph until a probe passes, then minimize the
// passing set with delta debugging (Zeller's ddmin: try halves, then
// complements, then finer splits), so that dropping any one name of the
// answer makes the probe fail again (1-minimal) within the budget.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace parity {

struct SearchProbe {
  std::string phase;                // "seed", "grow", "all", "bisect", "verify"
  std::vector<std::string> change;  // the set tried
  bool passed = false;
  double seconds = 0;
  std::string note;  // what the probe said when it failed to run (a converter's error)
};

struct SearchResult {
  std::optional<std::vector<std::string>> found;  // the smallest passing set found
  std::vector<SearchProbe> probes;               // in order; one per check run
  bool budget_spent = false;
  bool minimal = false;  // every one-smaller subset was probed and failed
};

// Whether a change passes; an error ends the search (the probe's note keeps
// a converter's refusal of one set instead: return false with `note` set).
using Probe = std::function<Result<bool>(const std::vector<std::string>& change, std::string* note)>;
// The names one step further along the graph from `current` (only new ones).
using Grow = std::function<std::vector<std::string>(const std::vector<std::string>& current)>;

struct SearchSpace {
  std::vector<std::string> seeds;  // tried first (empty: start from `all`)
  Grow grow;                       // may be empty: after the seeds, `all`
  std::vector<std::string> all;    // the largest change tried
  int budget = 24;                 // probes at most
  std::function<void(const SearchProbe&)> on_probe;  // after each probe (progress); may be empty
};

// kInternal only when `probe` fails; a search that finds nothing within the
// budget returns a result without `found`.
Result<SearchResult> SearchSmallestChange(const SearchSpace& space, const Probe& probe);

}  // namespace parity
