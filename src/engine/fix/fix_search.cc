#include "engine/fix/fix_search.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace parity {
namespace {

std::vector<std::string> Unique(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& n : names)
    if (seen.insert(n).second) out.push_back(n);
  return out;
}

std::string Key(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string key;
  for (const auto& n : names) key += n + '\n';
  return key;
}

// Probes with a cache (a set tried twice counts once) and the budget.
class Prober {
 public:
  Prober(const Probe& probe, const SearchSpace& space, SearchResult& result)
      : probe_(probe), budget_(space.budget), on_probe_(space.on_probe), result_(result) {}

  // nullopt: the budget is spent.
  Result<std::optional<bool>> Try(const std::vector<std::string>& change, const std::string& phase) {
    const std::string key = Key(change);
    if (auto it = cache_.find(key); it != cache_.end()) return std::optional<bool>(it->second);
    if (static_cast<int>(result_.probes.size()) >= budget_) {
      result_.budget_spent = true;
      return std::optional<bool>();
    }
    SearchProbe p{.phase = phase, .change = change};
    const auto start = std::chrono::steady_clock::now();
    auto passed = probe_(change, &p.note);
    if (!passed) return std::unexpected(passed.error());
    p.passed = *passed;
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result_.probes.push_back(p);
    if (on_probe_) on_probe_(p);
    cache_[key] = p.passed;
    return std::optional<bool>(p.passed);
  }

 private:
  const Probe& probe_;
  int budget_;
  const std::function<void(const SearchProbe&)>& on_probe_;
  SearchResult& result_;
  std::map<std::string, bool> cache_;
};

std::vector<std::vector<std::string>> Split(const std::vector<std::string>& set, size_t n) {
  std::vector<std::vector<std::string>> chunks(n);
  for (size_t i = 0; i < set.size(); ++i) chunks[i * n / set.size()].push_back(set[i]);
  return chunks;
}

std::vector<std::string> Without(const std::vector<std::string>& set, const std::vector<std::string>& chunk) {
  std::vector<std::string> out;
  for (const auto& s : set)
    if (std::find(chunk.begin(), chunk.end(), s) == chunk.end()) out.push_back(s);
  return out;
}

// ddmin on a passing set: a chunk alone, then a complement, then finer.
Result<std::vector<std::string>> Minimize(std::vector<std::string> set, Prober& prober, bool& minimal) {
  size_t n = 2;
  while (set.size() >= 2) {
    bool reduced = false;
    const auto chunks = Split(set, std::min(n, set.size()));
    for (const auto& chunk : chunks) {
      PARITY_ASSIGN_OR_RETURN(auto passed, prober.Try(chunk, "bisect"));
      if (!passed) return set;
      if (*passed) { set = chunk; n = 2; reduced = true; break; }
    }
    if (reduced) continue;
    for (const auto& chunk : chunks) {
      if (chunks.size() == 2) break;  // with two chunks, a complement is the other chunk
      auto rest = Without(set, chunk);
      PARITY_ASSIGN_OR_RETURN(auto passed, prober.Try(rest, "bisect"));
      if (!passed) return set;
      if (*passed) { set = rest; n = std::max<size_t>(n - 1, 2); reduced = true; break; }
    }
    if (reduced) continue;
    if (n >= set.size()) break;
    n = std::min(n * 2, set.size());
  }
  minimal = true;
  return set;
}

}  // namespace

Result<SearchResult> SearchSmallestChange(const SearchSpace& space, const Probe& probe) {
  SearchResult result;
  Prober prober(probe, space, result);
  const auto all = Unique(space.all);
  std::vector<std::string> current = Unique(space.seeds.empty() ? all : space.seeds);
  std::string phase = space.seeds.empty() ? "all" : "seed";
  std::optional<std::vector<std::string>> passing;
  while (!current.empty()) {
    PARITY_ASSIGN_OR_RETURN(auto passed, prober.Try(current, phase));
    if (!passed) return result;  // budget spent before anything passed
    if (*passed) { passing = current; break; }
    if (phase == "all") return result;
    std::vector<std::string> more = space.grow ? space.grow(current) : std::vector<std::string>{};
    std::erase_if(more, [&](const std::string& m) { return std::find(current.begin(), current.end(), m) != current.end(); });
    if (more.empty()) {
      if (Key(current) == Key(all) || all.empty()) return result;
      current = all;
      phase = "all";
      continue;
    }
    current.insert(current.end(), more.begin(), more.end());
    phase = "grow";
  }
  if (!passing) return result;
  PARITY_ASSIGN_OR_RETURN(result.found, Minimize(*passing, prober, result.minimal));
  return result;
}

}  // namespace parity
