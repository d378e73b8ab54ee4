// Sample generation: resolve every input's dims to symbols and sizes (the
// plan, sample_plan.cc), bound them (sample_bounds.cc), list the samples that
// apply (sample_recipes.cc), then fill each sample's tensors from its own
// seeded stream.
#include "engine/inputs/sample_gen.h"

#include <fmt/format.h>

#include "engine/inputs/sample_plan.h"

namespace parity {

namespace {

using sample_internal::InputPlan;
using sample_internal::Mode;
using sample_internal::Plan;
using sample_internal::Recipe;

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
  PARITY_ASSIGN_OR_RETURN(Plan plan, sample_internal::MakePlan(model, options));
  if (notes) {
    notes->roles.clear();
    for (const auto& in : plan.inputs) notes->roles.emplace_back(in.name, in.role);
    notes->relations = plan.relations.Describe();
    notes->bounded.clear();
  }
  sample_internal::BoundDefaults(plan, options, notes);
  std::vector<Recipe> recipes = sample_internal::Recipes(plan, options);
  // Every sample checked before the first is made.
  for (Recipe& recipe : recipes)
    PARITY_RETURN_IF_ERROR(sample_internal::BoundRecipe(plan, options, recipe.name, recipe.sizes));
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
