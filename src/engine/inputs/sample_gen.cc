// Sample generation: resolve every input's dims to symbols and sizes (the
// plan), then fill each sample's tensors from its own seeded stream.
#include "engine/inputs/sample_gen.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "engine/inputs/sample_values.h"
#include "onnx/edit.h"
#include "onnx/graph.h"
#include "onnx/inspect.h"

namespace parity {

namespace {

using sample_internal::InputPlan;
using sample_internal::Mode;

constexpr int64_t kDefaultDynamicSize = 32;

bool ContainsBatch(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s.find("batch") != std::string::npos;
}

// Ops that pass indices through unchanged on their way to a Gather.
bool PassesIndices(const GraphNode& n) {
  static const std::set<std::string> kOps = {"Cast",    "Unsqueeze", "Squeeze",
                                             "Reshape", "Flatten",   "Identity"};
  return n.domain.empty() && kOps.contains(n.op_type);
}

// What WalkConsumers does after visiting one consumer.
enum class Walk { kSkip, kFollow, kStop };

// Visits every node that reads `input`, or a tensor it flows into through the
// nodes a visit follows: visit(node, tensor) says whether to walk on into the
// node's first output (kFollow), not (kSkip), or end the walk (kStop).
// Returns whether a visit stopped it.
template <typename Visit>
bool WalkConsumers(const GraphView& g, const std::string& input, Visit visit) {
  std::vector<std::string> frontier = {input};
  std::set<std::string> seen;
  while (!frontier.empty()) {
    std::string tensor = frontier.back();
    frontier.pop_back();
    if (!seen.insert(tensor).second) continue;
    auto it = g.consumers.find(tensor);
    if (it == g.consumers.end()) continue;
    for (size_t index : it->second) {
      const GraphNode& n = g.nodes[index];
      const Walk next = visit(n, tensor);
      if (next == Walk::kStop) return true;
      if (next == Walk::kFollow && !n.outputs.empty()) frontier.push_back(n.outputs[0]);
    }
  }
  return false;
}

// The smallest first dim of a Gather data initializer reached from `input`
// as indices; 0 when none.
int64_t FindVocab(const Model& model, const GraphView& g, const std::string& input) {
  int64_t vocab = 0;
  WalkConsumers(g, input, [&](const GraphNode& n, const std::string& tensor) {
    if (n.domain.empty() && n.op_type == "Gather" && n.inputs.size() >= 2 && n.inputs[1] == tensor) {
      auto data = ReadInitializer(model, n.inputs[0]);
      if (data && data->rank() >= 1 && data->shape()[0] > 0)
        vocab = vocab == 0 ? data->shape()[0] : std::min(vocab, data->shape()[0]);
      return Walk::kSkip;
    }
    return PassesIndices(n) && !n.inputs.empty() && n.inputs[0] == tensor ? Walk::kFollow : Walk::kSkip;
  });
  return vocab;
}

// Where a node reads a size or a count: the input positions of each op
// whose value sets how many iterations run or how many elements are made.
const std::map<std::string, std::vector<size_t>>& CountSinks() {
  static const std::map<std::string, std::vector<size_t>> kSinks = {
      {"Loop", {0}},   {"Range", {0, 1, 2}}, {"ConstantOfShape", {0}}, {"Expand", {1}},
      {"Tile", {1}},   {"Reshape", {1}},     {"Resize", {3}},          {"Pad", {1}},
      {"TopK", {1}},   {"OneHot", {1}},      {"NonMaxSuppression", {2}}};
  return kSinks;
}

// Ops a count passes through on its way to where it is used.
bool PassesCount(const GraphNode& n) {
  static const std::set<std::string> kOps = {"Cast", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity",
                                             "Concat", "Add", "Mul", "Max", "Min", "Abs"};
  return n.domain.empty() && kOps.contains(n.op_type);
}

// Whether `input` sets an iteration count or a size: it reaches a Loop's
// trip count, a Range's bounds, a shape of ConstantOfShape/Expand/Tile/...
// (CountSinks), directly or through PassesCount ops.
bool FeedsCount(const GraphView& g, const std::string& input) {
  return WalkConsumers(g, input, [](const GraphNode& n, const std::string& tensor) {
    auto sink = n.domain.empty() ? CountSinks().find(n.op_type) : CountSinks().end();
    if (sink != CountSinks().end())
      for (size_t at : sink->second)
        if (at < n.inputs.size() && n.inputs[at] == tensor) return Walk::kStop;
    // Reshape's data passes a count on; its shape input is a sink above.
    return PassesCount(n) && !n.inputs.empty() && (n.op_type != "Reshape" || n.inputs[0] == tensor)
               ? Walk::kFollow
               : Walk::kSkip;
  });
}

struct Plan {
  std::vector<InputPlan> inputs;
  std::vector<std::string> symbols;  // in order of first appearance
  std::set<std::string> batch_like;
  std::map<std::string, int64_t> defaults;
  sample_internal::Relations relations;
  std::map<std::string, int64_t> dims;  // the user's --dim, with what the relations derive from it
};

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
    sample_internal::Axis a;
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
  sample_internal::AssignRoles(plan.inputs, o.roles);
  plan.relations = sample_internal::FindRelations(plan.inputs, plan.batch_like, o.traced_dims);
  PARITY_ASSIGN_OR_RETURN(plan.dims, sample_internal::KeepRelations(plan.relations, o.dims));
  for (const auto& s : plan.symbols) {
    auto given = plan.dims.find(s);
    plan.defaults[s] = given != plan.dims.end()      ? given->second
                       : plan.batch_like.contains(s) ? 1
                                                     : kDefaultDynamicSize;
  }
  sample_internal::ApplyRelations(plan.relations, plan.defaults);
  return plan;
}

// Whether a symbol is set by the user (--dim, or derived from it) or follows others.
bool Pinned(const Plan& plan, const SampleGenOptions&, const std::string& symbol) {
  return plan.dims.contains(symbol) || plan.relations.same.contains(symbol) || plan.relations.sums.contains(symbol);
}

// The elements of `in` at `sizes`, saturating at int64's max.
int64_t Elements(const InputPlan& in, const std::map<std::string, int64_t>& sizes) {
  int64_t n = 1;
  for (const auto& a : in.axes) {
    const int64_t d = a.symbol.empty() ? a.fixed : sizes.at(a.symbol);
    if (d <= 0) return 0;
    n = n > std::numeric_limits<int64_t>::max() / d ? std::numeric_limits<int64_t>::max() : n * d;
  }
  return n;
}

int64_t SampleBytes(const Plan& plan, const std::map<std::string, int64_t>& sizes) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t total = 0;
  for (const auto& in : plan.inputs) {
    const int64_t size = static_cast<int64_t>(DTypeSize(in.dtype));
    const int64_t n = Elements(in, sizes);
    const int64_t bytes = n > kMax / std::max<int64_t>(size, 1) ? kMax : n * size;
    total = total > kMax - bytes ? kMax : total + bytes;
  }
  return total;
}

// Halves the largest `shrinkable` dim of each input over the element bound
// (of every input while the sample is over the byte bound), each dim once a
// round, until the sample is within both or nothing is left to halve.
// Returns the sample's bytes.
int64_t FitToBounds(const Plan& plan, const SampleGenOptions& o, const std::set<std::string>& shrinkable,
                    std::map<std::string, int64_t>& sizes) {
  while (true) {
    const bool over_bytes = SampleBytes(plan, sizes) > o.max_sample_bytes;
    std::set<std::string> halve;
    for (const auto& in : plan.inputs) {
      if (!over_bytes && Elements(in, sizes) <= o.max_input_elements) continue;
      const std::string* largest = nullptr;
      for (const auto& a : in.axes)
        if (!a.symbol.empty() && shrinkable.contains(a.symbol) && sizes.at(a.symbol) > 1 &&
            (largest == nullptr || sizes.at(a.symbol) > sizes.at(*largest)))
          largest = &a.symbol;
      if (largest != nullptr) halve.insert(*largest);
    }
    if (halve.empty()) return SampleBytes(plan, sizes);
    for (const auto& s : halve) sizes[s] = (sizes[s] + 1) / 2;
    sample_internal::ApplyRelations(plan.relations, sizes);
  }
}

// The plan's defaults within the bounds; the dims made smaller in `notes`.
void BoundDefaults(Plan& plan, const SampleGenOptions& o, SampleNotes* notes) {
  std::set<std::string> shrinkable;
  for (const auto& s : plan.symbols)
    if (!Pinned(plan, o, s)) shrinkable.insert(s);
  const std::map<std::string, int64_t> before = plan.defaults;
  FitToBounds(plan, o, shrinkable, plan.defaults);
  std::string made;
  for (const auto& s : plan.symbols)
    if (plan.defaults.at(s) != before.at(s))
      made += fmt::format("{}{} {} (default {})", made.empty() ? "" : ", ", s, plan.defaults.at(s), before.at(s));
  if (notes != nullptr && !made.empty())
    notes->bounded = fmt::format(
        "{}; to keep each generated input within {} elements and a sample within {} MiB (--max-input-elements, "
        "--max-generated-mib)",
        made, o.max_input_elements, o.max_sample_bytes >> 20);
}

// A recipe's sizes within the bounds, the dims it sets itself kept; an error
// when the model's fixed dims alone hold more than the byte bound.
Status BoundRecipe(const Plan& plan, const SampleGenOptions& o, const std::string& name,
                   std::map<std::string, int64_t>& sizes) {
  std::set<std::string> shrinkable;
  for (const auto& s : plan.symbols)
    if (!Pinned(plan, o, s) && sizes.at(s) == plan.defaults.at(s)) shrinkable.insert(s);
  const int64_t bytes = FitToBounds(plan, o, shrinkable, sizes);
  if (bytes > o.max_sample_bytes)
    return InvalidArgument(fmt::format(
        "generated sample '{}' would hold {} bytes, over the bound of {} MiB (--max-generated-mib): the model's "
        "fixed dims or the dims given hold that much; raise the bound or give --inputs",
        name, bytes, o.max_sample_bytes >> 20));
  return {};
}

struct Recipe {
  std::string name;
  std::map<std::string, int64_t> sizes;
  Mode float_mode = Mode::kTypical;
  Mode int_mode = Mode::kTypical;
  double scale = 1;
};

bool Wants(const SampleGenOptions& o, SampleKind k) {
  return std::find(o.kinds.begin(), o.kinds.end(), k) != o.kinds.end();
}

struct Applies {
  bool any_float = false, any_vocab = false, any_plain_int = false, any_count = false, any_mask = false;
};

Applies WhatApplies(const Plan& plan) {
  Applies a;
  for (const auto& in : plan.inputs) {
    a.any_float |= IsFloating(in.dtype);
    a.any_vocab |= in.vocab > 0;
    a.any_count |= in.count;
    a.any_mask |= in.role == InputRole::kMask;
    a.any_plain_int |= IsInteger(in.dtype) && in.role == InputRole::kOther && !in.count;
  }
  return a;
}

void AddSizeRecipes(const Plan& plan, const SampleGenOptions& o, std::vector<Recipe>& r) {
  const auto& d = plan.defaults;
  if (!plan.batch_like.empty()) {
    int64_t batch = 4;
    for (const auto& s : plan.batch_like) batch = std::max(batch, 2 * d.at(s));
    Recipe b{fmt::format("boundary_batch{}", batch), d};
    for (const auto& s : plan.batch_like)
      if (!Pinned(plan, o, s)) b.sizes[s] = batch;
    r.push_back(std::move(b));
  }
  Recipe min{"boundary_min_size", d};
  bool any_other = false;
  for (const auto& s : plan.symbols)
    if (!plan.batch_like.contains(s) && !Pinned(plan, o, s)) min.sizes[s] = o.min_size, any_other = true;
  if (any_other) r.push_back(std::move(min));
  if (!plan.relations.past.empty() && !plan.dims.contains(plan.relations.past)) {
    Recipe empty_cache{"boundary_past0", d};  // the first step: nothing cached yet
    empty_cache.sizes[plan.relations.past] = 0;
    r.push_back(std::move(empty_cache));
  }
  for (const auto& in : plan.inputs) {
    size_t n = in.axes.size();
    if (n < 3 || in.role == InputRole::kCache) continue;
    const std::string& h = in.axes[n - 2].symbol;
    const std::string& w = in.axes[n - 1].symbol;
    if (h.empty() || w.empty() || h == w || plan.batch_like.contains(h) || plan.batch_like.contains(w) ||
        Pinned(plan, o, w))
      continue;
    Recipe ns{"boundary_nonsquare", d};
    ns.sizes[w] = 2 * std::max<int64_t>(d.at(h), 1);
    ns.sizes[h] = std::max<int64_t>(d.at(h), 1);
    r.push_back(std::move(ns));
    break;
  }
}

void AddAnomalyRecipes(const Plan& plan, const Applies& a, std::vector<Recipe>& r) {
  const auto& d = plan.defaults;
  if (a.any_float) {
    r.push_back({"anomaly_nan", d, Mode::kNaN, Mode::kTypical});
    r.push_back({"anomaly_inf", d, Mode::kInf, Mode::kTypical});
  }
  if (!plan.symbols.empty()) {
    // A sequence model's empty input is the empty sequence; else the empty
    // batch (the first batch-like symbol in model order), else the first.
    Recipe e{"anomaly_empty", d};
    std::string zero = plan.relations.seq.empty() ? plan.symbols.front() : plan.relations.seq;
    if (plan.relations.seq.empty())
      for (const auto& s : plan.symbols)
        if (plan.batch_like.contains(s)) {
          zero = s;
          break;
        }
    e.sizes[zero] = 0;
    r.push_back(std::move(e));
  }
  if (a.any_vocab) {
    r.push_back({"anomaly_out_of_range_ids", d, Mode::kTypical, Mode::kOutOfRange});
    r.push_back({"anomaly_negative_ids", d, Mode::kTypical, Mode::kNegative});
  }
}

std::vector<Recipe> Recipes(const Plan& plan, const SampleGenOptions& o) {
  const Applies a = WhatApplies(plan);
  const auto& d = plan.defaults;
  std::vector<Recipe> r;
  if (Wants(o, SampleKind::kTypical)) r.push_back({"typical", d});
  if (Wants(o, SampleKind::kBoundary)) {
    r.push_back({"boundary_zeros", d, Mode::kZeros, Mode::kZeros});
    if (a.any_float) {
      r.push_back({"boundary_large", d, Mode::kTypical, Mode::kTypical, 100});
      r.push_back({"boundary_small", d, Mode::kTypical, Mode::kTypical, 1e-3});
    }
    if (a.any_plain_int) r.push_back({"boundary_dtype_max", d, Mode::kTypical, Mode::kDtypeMax});
    // A count at its dtype's max asks for 2^63 iterations or elements: a
    // run that never ends or never fits. Counts get a modest max instead.
    if (a.any_count) r.push_back({"boundary_count_max", d, Mode::kTypical, Mode::kCountMax});
    // ids at 0 and vocab - 1, masks all ones (no padding)
    if (a.any_vocab || a.any_mask) r.push_back({"boundary_edges", d, Mode::kTypical, Mode::kEdges});
    AddSizeRecipes(plan, o, r);
  }
  if (Wants(o, SampleKind::kAnomaly)) AddAnomalyRecipes(plan, a, r);
  for (auto& recipe : r) sample_internal::ApplyRelations(plan.relations, recipe.sizes);
  return r;
}

// One sample of `recipe`: each input filled from its own stream, masks and
// positions by their role (positions last: they continue the mask's rows).
Result<Sample> MakeSample(const Plan& plan, const Recipe& recipe, uint64_t seed) {
  Sample s{recipe.name, {}};
  const auto found = recipe.sizes.find(plan.relations.past);
  const int64_t past = found == recipe.sizes.end() ? 0 : found->second;
  std::vector<std::pair<const InputPlan*, Mode>> positions;
  for (const InputPlan& in : plan.inputs) {
    Shape shape;
    for (const auto& a : in.axes) shape.push_back(a.symbol.empty() ? a.fixed : recipe.sizes.at(a.symbol));
    PARITY_ASSIGN_OR_RETURN(Tensor t, WithContext(Tensor::Create(in.dtype, shape),
                                                  fmt::format("sample '{}', input '{}'", recipe.name, in.name)));
    bool is_float = IsFloating(in.dtype);
    const Mode mode = is_float ? recipe.float_mode : recipe.int_mode;
    sample_internal::Fill(t, in, mode, is_float ? recipe.scale : 1,
                          sample_internal::StreamSeed(seed, recipe.name, in.name));
    sample_internal::FillRole(t, in, mode, past);
    if (in.role == InputRole::kPositions) positions.emplace_back(&in, mode);
    PARITY_RETURN_IF_ERROR(s.tensors.Add(in.name, std::move(t)));
  }
  const Tensor* mask = nullptr;
  for (const InputPlan& in : plan.inputs)
    if (in.role == InputRole::kMask && !in.range && mask == nullptr) mask = s.tensors.Find(in.name);
  for (const auto& [in, mode] : positions) {
    Tensor t = s.tensors.Find(in->name)->Copy();
    sample_internal::FillPositions(t, *in, mode, past, mask);
    s.tensors.Set(in->name, std::move(t));
  }
  return s;
}

}  // namespace

Result<std::vector<Sample>> GenerateSamples(const Model& model, const SampleGenOptions& options,
                                            SampleNotes* notes) {
  if (options.min_size < 0) return InvalidArgument("min_size must be >= 0");
  if (options.max_input_elements < 1 || options.max_sample_bytes < 1)
    return InvalidArgument("the bounds on generated samples must be >= 1");
  PARITY_ASSIGN_OR_RETURN(Plan plan, MakePlan(model, options));
  if (notes) {
    notes->roles.clear();
    for (const auto& in : plan.inputs) notes->roles.emplace_back(in.name, in.role);
    notes->relations = plan.relations.Describe();
    notes->bounded.clear();
  }
  BoundDefaults(plan, options, notes);
  std::vector<Recipe> recipes = Recipes(plan, options);
  // Every sample checked before the first is made.
  for (Recipe& recipe : recipes) PARITY_RETURN_IF_ERROR(BoundRecipe(plan, options, recipe.name, recipe.sizes));
  std::vector<Sample> samples;
  for (const Recipe& recipe : recipes) {
    PARITY_ASSIGN_OR_RETURN(Sample s, MakeSample(plan, recipe, options.seed));
    samples.push_back(std::move(s));
  }
  return samples;
}

Result<Sample> GenerateTypicalSample(const Model& model, SampleGenOptions options) {
  options.kinds = {SampleKind::kTypical};
  PARITY_ASSIGN_OR_RETURN(auto samples, GenerateSamples(model, options));
  if (samples.empty()) return InternalError("no typical sample generated");
  return std::move(samples.front());
}

}  // namespace parity
