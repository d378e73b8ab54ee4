// The overlays of report/overlays/model_explorer.h before they are JSON: one value per
// node id, gathered from the engine's reports (model_explorer_overlays.cc)
// and rendered by model_explorer.cc.
#pragma once

#include <string>
#include <vector>

#include "report/overlays/model_explorer.h"

namespace parity::model_explorer_internal {

// How an overlay's numbers are coloured.
enum class Scale {
  kScore,  // tolerance units: pass <= 0.5 < near <= 1 < fail
  kSqnr,   // dB, higher is better: < 10 poor, < 20 fair, else good
  kSteps,  // quantization steps: <= 1 rounding, <= 2 near, else fail
  kCount,  // a count: three reds, by thirds of the overlay's largest count
  kText,   // strings, coloured per result where a colour says something
};

struct OverlayValue {
  std::string id;    // the adapter's node id
  double number = 0;
  std::string text;  // kText
  std::string color;  // kText: a CSS colour, or "" for none
};

struct Overlay {
  std::string file;   // one of kModelExplorerFiles
  std::string title;  // the node data's name, shown in Model Explorer's panel
  Scale scale = Scale::kScore;
  bool optimized_graph = false;
  std::vector<OverlayValue> values;  // graph order; one per id
};

// The colours of pass / near / fail / unchecked.
inline constexpr const char* kPassColor = "#a5d6a7";
inline constexpr const char* kNearColor = "#fff59d";
inline constexpr const char* kFailColor = "#ef9a9a";
inline constexpr const char* kUncheckedColor = "#e0e0e0";

// Every overlay `in` has data for, in the order of kModelExplorerFiles;
// overlays without a value are left out.
std::vector<Overlay> CollectOverlays(const ModelExplorerInput& in);

}  // namespace parity::model_explorer_internal
