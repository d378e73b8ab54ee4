#include "engine/torch/torch_scope.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "core/py_literal.h"

namespace parity {
namespace {

constexpr std::string_view kNameScopes = "pkg.torch.onnx.name_scopes";
constexpr std::string_view kClassHierarchy = "pkg.torch.onnx.class_hierarchy";

bool IsNumeric(std::string_view atom) {
  return !atom.empty() && std::all_of(atom.begin(), atom.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// dynamo: name_scopes is the root "", then one full module path per enclosing
// module call, then the op's own name. The exporter records no call number:
// alignment tells calls apart by position (alignment.cc).
NodeScope FromMetadata(const GraphNode& node) {
  NodeScope scope;
  const std::string* names = node.Metadata(kNameScopes);
  if (names == nullptr) return scope;
  auto paths = ParsePyStringList(*names);
  if (!paths || paths->size() < 2) return scope;  // unreadable: no structure
  std::vector<std::string> classes;
  if (const std::string* h = node.Metadata(kClassHierarchy))
    if (auto parsed = ParsePyStringList(*h); parsed && parsed->size() == paths->size()) classes = *parsed;
  scope.source = ScopeSource::kMetadata;
  for (size_t k = 1; k + 1 < paths->size(); ++k) {
    if ((*paths)[k].empty()) continue;
    std::string type;
    if (!classes.empty()) {
      const std::string& qualified = classes[k];
      const size_t dot = qualified.rfind('.');
      type = dot == std::string::npos ? qualified : qualified.substr(dot + 1);
    }
    scope.levels.push_back({(*paths)[k], 0, std::move(type)});
  }
  return scope;
}

// "relu_1" -> ("relu", 1); nullopt without a numeric suffix.
std::optional<std::pair<std::string_view, int64_t>> SplitCall(std::string_view component) {
  const size_t us = component.rfind('_');
  if (us == std::string_view::npos || us == 0 || !IsNumeric(component.substr(us + 1))) return std::nullopt;
  int64_t call = 0;
  const auto digits = component.substr(us + 1);
  if (std::from_chars(digits.data(), digits.data() + digits.size(), call).ec != std::errc()) return std::nullopt;
  return std::pair{component.substr(0, us), call};
}

// The full path of scope component `c` under the module `parent`. A component
// is a module's path from its last non-numeric atom on, so one with a dot
// ("block.2", "stage2.0.0") repeats its head atom from the parent's path:
// "block.2" under "features.5.block" is "features.5.block.2", "stage2.0.0"
// under "stage2.0" is "stage2.0.0", "features.5" under "features" is
// "features.5"; when the parent lacks the head atom, the container was never
// called: "layers.0" under "encoder" is "encoder.layers.0". Without a dot,
// "conv1" under "layer1.0" is "layer1.0.conv1".
std::string FullPath(std::string_view parent, std::string_view c) {
  if (parent.empty()) return std::string(c);
  const size_t dot = c.find('.');
  if (dot != std::string_view::npos) {
    const std::string_view head = c.substr(0, dot);
    std::vector<std::string_view> atoms;
    for (size_t begin = 0;;) {
      const size_t end = parent.find('.', begin);
      atoms.push_back(parent.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
      if (end == std::string_view::npos) break;
      begin = end + 1;
    }
    for (size_t k = atoms.size(); k-- > 0;) {
      if (atoms[k] != head) continue;
      if (k == 0) return std::string(c);
      return std::string(parent.substr(0, atoms[k].data() - parent.data())) + std::string(c);
    }
  }
  return std::string(parent) + "." + std::string(c);
}

NodeScope FromNodeName(const GraphNode& node, const std::unordered_set<std::string>& known) {
  NodeScope scope;
  if (node.name_synthesized || !node.name.starts_with('/')) return scope;
  std::vector<std::string_view> components;
  std::string_view rest = std::string_view(node.name).substr(1);
  for (size_t slash; (slash = rest.find('/')) != std::string_view::npos; rest.remove_prefix(slash + 1))
    components.push_back(rest.substr(0, slash));
  // `rest` is the op's own part ("Relu", "Conv_1"): not a module.
  scope.source = ScopeSource::kNodeName;
  std::string parent;
  for (std::string_view c : components) {
    if (c.empty()) return NodeScope{};  // "//": not a TorchScript scope
    std::string literal = FullPath(parent, c);
    ScopeLevel level{literal, 0, {}};
    if (auto split = SplitCall(c); split && !known.contains(literal)) {
      std::string stem = FullPath(parent, split->first);
      if (known.empty() || known.contains(stem)) level = {std::move(stem), split->second, {}};
    }
    parent = level.module;
    scope.levels.push_back(std::move(level));
  }
  return scope;
}

}  // namespace

std::string_view ScopeSourceName(ScopeSource s) {
  switch (s) {
    case ScopeSource::kMetadata:
      return "metadata";
    case ScopeSource::kNodeName:
      return "node name";
    case ScopeSource::kNone:
      break;
  }
  return "none";
}

bool NodeScope::Within(std::string_view module, int64_t call) const {
  return std::any_of(levels.begin(), levels.end(),
                     [&](const ScopeLevel& l) { return l.module == module && l.call == call; });
}

NodeScope ScopeOfNode(const GraphNode& node, const std::unordered_set<std::string>& known) {
  if (NodeScope s = FromMetadata(node); s.source != ScopeSource::kNone) return s;
  return FromNodeName(node, known);
}

std::vector<NodeScope> ScopesOf(const GraphView& g, const std::unordered_set<std::string>& known) {
  std::vector<NodeScope> out;
  out.reserve(g.nodes.size());
  for (const GraphNode& n : g.nodes) out.push_back(ScopeOfNode(n, known));
  return out;
}

}  // namespace parity
