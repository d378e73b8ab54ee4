#include "engine/torch/module_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace parity {
namespace {

// The prefixes of `path` that end at a component boundary, dot included:
// "a.b.c" -> "a.", "a.b.".
std::vector<std::string_view> Prefixes(std::string_view path) {
  std::vector<std::string_view> out;
  for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.', dot + 1))
    out.push_back(path.substr(0, dot + 1));
  return out;
}

size_t Components(std::string_view prefix) { return static_cast<size_t>(std::count(prefix.begin(), prefix.end(), '.')); }

}  // namespace

std::optional<std::string> ModulePathMap::ToExport(std::string_view dump_path) const {
  if (!strip.empty()) {
    if (dump_path.starts_with(strip)) return add + std::string(dump_path.substr(strip.size()));
    // The module the wrapper holds, whose own path is the prefix: the exported root.
    if (dump_path == std::string_view(strip).substr(0, strip.size() - 1)) return add.empty() ? "" : add.substr(0, add.size() - 1);
    return std::nullopt;
  }
  return add + std::string(dump_path);
}

std::string ModulePathMap::ToDump(std::string_view export_path) const {
  if (export_path.empty()) return strip.empty() ? "" : strip.substr(0, strip.size() - 1);  // the exported root
  std::string_view rest = export_path;
  if (!add.empty()) {
    if (!export_path.starts_with(add)) return std::string(export_path);
    rest = export_path.substr(add.size());
  }
  return strip + std::string(rest);
}

std::string ModulePathMap::Describe() const {
  std::string how = !strip.empty() ? fmt::format("the dump's module paths lose the prefix '{}'", strip)
                    : !add.empty() ? fmt::format("the dump's module paths gain the prefix '{}'", add)
                                   : std::string("module paths as dumped");
  std::string without = Identity() ? "" : fmt::format(", {} without the prefix", as_is);
  return fmt::format("{}: {} of {} dumped modules name a module of the export{}", how, in_export, dumped,
                     without);
}

ModulePathMap InferModulePathMap(const std::vector<std::string>& dump_modules,
                                 const std::unordered_set<std::string>& export_modules) {
  const std::set<std::string> dumped(dump_modules.begin(), dump_modules.end());
  ModulePathMap map;
  map.dumped = dumped.size();
  for (const auto& d : dumped) map.as_is += export_modules.contains(d);
  map.in_export = map.as_is;

  // Matches under each candidate prefix; a dumped module counts once per prefix.
  std::map<std::string, size_t> strips, adds;
  for (const auto& d : dumped)
    for (std::string_view p : Prefixes(d))
      if (export_modules.contains(std::string(std::string_view(d).substr(p.size())))) ++strips[std::string(p)];
  for (const auto& e : export_modules)
    for (std::string_view p : Prefixes(e))
      if (dumped.contains(std::string(std::string_view(e).substr(p.size())))) ++adds[std::string(p)];

  // The best candidate: most matches, then fewest components, stripping before adding.
  struct Candidate {
    size_t count;
    size_t components;
    bool add;
    std::string prefix;
  };
  std::optional<Candidate> best;
  auto consider = [&](const std::string& prefix, size_t count, bool add) {
    const Candidate c{count, Components(prefix), add, prefix};
    if (!best || std::tie(c.count, best->components, best->add) > std::tie(best->count, c.components, c.add))
      best = c;
  };
  for (const auto& [prefix, count] : strips) consider(prefix, count, false);
  for (const auto& [prefix, count] : adds) consider(prefix, count, true);
  if (best && best->count > map.as_is) {
    (best->add ? map.add : map.strip) = best->prefix;
    map.in_export = best->count;
  }
  return map;
}

}  // namespace parity
