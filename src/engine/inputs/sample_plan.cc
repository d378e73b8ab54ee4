// The plan of a model's generated samples: every input's dims resolved to
// fixed sizes and symbols (sample_gen.h, "Shapes"), what the graph does with
// its integer inputs, roles and size relations, and each symbol's default.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "engine/inputs/sample_plan.h"
#include "onnx/inspect.h"

namespace parity::sample_internal {

namespace {

constexpr int64_t kDefaultDynamicSize = 32;

bool ContainsBatch(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s.find("batch") != std::string::npos;
}

Result<InputPlan> PlanInput(const ValueInfo& v, const SampleGenOptions& o, Plan& plan) {
  InputPlan in;
  in.name = v.name;
  if (!v.type.dtype || *v.type.dtype == DType::kString)
    return Unsupported(fmt::format("input '{}' has type {}; parity generates numeric and bool tensors only",
                                   v.name, v.type.ToString()));
  in.dtype = *v.type.dtype;
  auto override_it = o.shapes.find(v.name);
  const std::vector<DimSpec>* spec = override_it == o.shapes.end() ? nullptr : &override_it->second;
  if (!v.type.has_shape && !spec)
    return InvalidArgument(
        fmt::format("input '{}' declares no shape; give --shape {}:DIMxDIMx...", v.name, v.name));
  if (spec && v.type.has_shape && spec->size() != v.type.dims.size())
    return InvalidArgument(fmt::format("--shape for '{}' has rank {}, the model declares {} ({})", v.name,
                                       spec->size(), v.type.dims.size(), v.type.ToString()));
  size_t rank = spec ? spec->size() : v.type.dims.size();
  for (size_t axis = 0; axis < rank; ++axis) {
    const Dim* declared = v.type.has_shape ? &v.type.dims[axis] : nullptr;
    const DimSpec* given = spec ? &(*spec)[axis] : nullptr;
    Axis a;
    if (declared && declared->kind == Dim::Kind::kKnown) {
      if (given && given->symbol.empty() && given->value != declared->value)
        return InvalidArgument(fmt::format("--shape for '{}': axis {} is {} in the model, not {}", v.name,
                                           axis, declared->value, given->value));
      a.fixed = declared->value;  // the model's number wins over a symbol given for it
    } else if (given && given->symbol.empty()) {
      a.fixed = given->value;
    } else {
      a.symbol = given ? given->symbol
                 : declared && declared->kind == Dim::Kind::kSymbolic
                     ? declared->symbol
                     : fmt::format("{}.{}", v.name, axis);  // unknown: private to this axis
      if (std::find(plan.symbols.begin(), plan.symbols.end(), a.symbol) == plan.symbols.end())
        plan.symbols.push_back(a.symbol);
      if ((axis == 0 && rank >= 2) || ContainsBatch(a.symbol)) plan.batch_like.insert(a.symbol);
    }
    in.axes.push_back(a);
  }
  if (auto r = o.ranges.find(v.name); r != o.ranges.end()) in.range = r->second;
  return in;
}

}  // namespace

Result<Plan> MakePlan(const Model& model, const SampleGenOptions& o) {
  ModelInfo info = Inspect(model);
  Plan plan;
  std::set<std::string> names;
  for (const auto& v : info.inputs) names.insert(v.name);
  for (const auto& [name, _] : o.shapes)
    if (!names.contains(name))
      return InvalidArgument(fmt::format("--shape names '{}', not a model input", name));
  for (const auto& [name, _] : o.ranges)
    if (!names.contains(name))
      return InvalidArgument(fmt::format("--range names '{}', not a model input", name));
  for (const auto& [name, _] : o.roles)
    if (!names.contains(name))
      return InvalidArgument(fmt::format("--role names '{}', not a model input", name));
  for (const auto& v : info.inputs) {
    PARITY_ASSIGN_OR_RETURN(InputPlan in, PlanInput(v, o, plan));
    plan.inputs.push_back(std::move(in));
  }
  for (const auto& [symbol, _] : o.dims)
    if (std::find(plan.symbols.begin(), plan.symbols.end(), symbol) == plan.symbols.end())
      return InvalidArgument(
          fmt::format("--dim names '{}', not a dynamic dim of the model (dynamic dims: {})", symbol,
                      plan.symbols.empty() ? "none" : fmt::format("{}", fmt::join(plan.symbols, ", "))));
  bool any_int = false;
  for (const auto& in : plan.inputs) any_int |= IsInteger(in.dtype);
  if (any_int) {
    auto g = BuildGraphView(model, {.infer_shapes = false});
    if (g)
      for (auto& in : plan.inputs)
        if (IsInteger(in.dtype)) {
          in.vocab = FindVocab(model, *g, in.name);
          in.count = in.vocab == 0 && FeedsCount(*g, in.name);
        }
  }
  AssignRoles(plan.inputs, o.roles);
  plan.relations = FindRelations(plan.inputs, plan.batch_like, o.traced_dims);
  PARITY_ASSIGN_OR_RETURN(plan.dims, KeepRelations(plan.relations, o.dims));
  for (const auto& s : plan.symbols) {
    auto given = plan.dims.find(s);
    plan.defaults[s] = given != plan.dims.end()      ? given->second
                       : plan.batch_like.contains(s) ? 1
                                                     : kDefaultDynamicSize;
  }
  ApplyRelations(plan.relations, plan.defaults);
  return plan;
}

bool Pinned(const Plan& plan, const std::string& symbol) {
  return plan.dims.contains(symbol) || plan.relations.same.contains(symbol) || plan.relations.sums.contains(symbol);
}

}  // namespace parity::sample_internal
