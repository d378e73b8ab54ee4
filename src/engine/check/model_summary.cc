#include "engine/check/model_summary.h"

#include <fmt/format.h>

#include <unordered_map>

#include "onnx/graph.h"

namespace parity {

Result<ScopeSummary> SummarizeScopes(const Model& m) {
  GraphViewOptions options;
  options.infer_shapes = false;
  PARITY_ASSIGN_OR_RETURN(GraphView g, BuildGraphView(m, options));
  ScopeSummary s;
  s.nodes = static_cast<int64_t>(g.nodes.size());
  std::unordered_map<std::string, size_t> index;
  for (const NodeScope& scope : ScopesOf(g)) {
    if (scope.source != ScopeSource::kNone && s.source != ScopeSource::kMetadata) s.source = scope.source;
    if (scope.levels.empty()) continue;
    ++s.scoped;
    const ScopeLevel& inner = scope.levels.back();
    const std::string key = inner.call > 0 ? fmt::format("{} (call {})", inner.module, inner.call) : inner.module;
    auto [it, fresh] = index.emplace(key, s.modules.size());
    if (fresh) s.modules.emplace_back(key, 0);
    ++s.modules[it->second].second;
  }
  return s;
}



}  // namespace parity
