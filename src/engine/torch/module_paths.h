// Which prefix turns the dump's module paths into the export's.
//
// A PyTorch model dumped through a wrapper module and exported without it
// (Ultralytics: the dump of `YOLO` reads `model.model.4.m.1.cv1`, the export
// of its DetectionModel scopes `model.4/m.1/cv1`), or the other way round,
// names every module differently on the two sides: structure would align
// nothing. InferModulePathMap finds the prefix to strip from the dump's paths
// or to add to them, at any depth, from the best structural match: the one
// under which most dumped module paths name a module the export recorded.
// docs/align.md ("Module paths").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace parity {

struct ModulePathMap {
  // Removed from the front of a dumped path ("model."), or put in front of it
  // ("model."); at most one of the two is set. Both empty: the paths agree.
  std::string strip;
  std::string add;
  size_t dumped = 0;     // distinct module paths the dump holds
  size_t in_export = 0;  // of those, how many name a module the export recorded (under the map)
  size_t as_is = 0;      // how many do without the map

  bool Identity() const { return strip.empty() && add.empty(); }
  // The export's path of a dumped module: "" for the exported root (the
  // wrapper's child itself), nullopt for a module outside the exported one
  // (the wrapper's other children).
  std::optional<std::string> ToExport(std::string_view dump_path) const;
  // The dump's path of an export module: the exported root ("") is the
  // wrapper's child ("model") or the root; unchanged when the map cannot
  // invert it.
  std::string ToDump(std::string_view export_path) const;
  // "the dump's module paths lose the prefix 'model.' (a wrapper module): 120 of
  // 125 dumped modules have nodes in the export, 1 without it"; for the
  // identity: "module paths as dumped: 120 of 125 dumped modules ...".
  std::string Describe() const;
};

// The map under which most of `dump_modules` (the dump's module paths) name
// one of `export_modules` (the paths the export's node scopes record). A
// prefix is kept only when it matches strictly more modules than none does;
// among equal matches the shortest prefix wins, stripping before adding.
// Never fails: with nothing in common, the identity (in_export 0).
ModulePathMap InferModulePathMap(const std::vector<std::string>& dump_modules,
                                 const std::unordered_set<std::string>& export_modules);

}  // namespace parity
