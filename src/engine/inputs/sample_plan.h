// INTERNAL to src/engine/inputs/sample_*: the plan of a model's generated
// samples (every input's resolved dims, the symbols and their default sizes)
// and the recipes that say how each sample differs from the typical one.
// Pure functions of the model and the options; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/inputs/sample_gen.h"
#include "engine/inputs/sample_values.h"
#include "onnx/graph.h"
#include "onnx/model.h"

namespace parity::sample_internal {

struct Plan {
  std::vector<InputPlan> inputs;
  std::vector<std::string> symbols;  // in order of first appearance
  std::set<std::string> batch_like;
  std::map<std::string, int64_t> defaults;
  Relations relations;
  std::map<std::string, int64_t> dims;  // the user's --dim, with what the relations derive from it
};

// The plan of `model`'s inputs under `o` (sample_plan.cc): kUnsupported for
// a string or untyped input; kInvalidArgument, one line, for an input with no
// shape and no --shape, a --shape/--range/--role/--dim naming no input or
// dynamic dim, a --shape that contradicts the model, --dim sizes that
// contradict the relations.
Result<Plan> MakePlan(const Model& model, const SampleGenOptions& o);

// Whether a symbol is set by the user (--dim, or derived from it) or follows others.
bool Pinned(const Plan& plan, const std::string& symbol);

// What the graph does with an integer input (sample_input_uses.cc).

// The smallest first dim of a Gather data initializer reached from `input`
// as indices; 0 when none.
int64_t FindVocab(const Model& model, const GraphView& g, const std::string& input);

// Whether `input` sets an iteration count or a size: it reaches a Loop's
// trip count, a Range's bounds, a shape of ConstantOfShape/Expand/Tile/...
// directly or through ops a count passes through (Cast, Concat, Add, ...).
bool FeedsCount(const GraphView& g, const std::string& input);

// Bounds on a sample's size (sample_bounds.cc).

// The plan's defaults within the bounds; the dims made smaller in `notes`
// (may be null).
void BoundDefaults(Plan& plan, const SampleGenOptions& o, SampleNotes* notes);

// A recipe's sizes within the bounds, the dims it sets itself kept;
// kInvalidArgument, one line, when the model's fixed dims alone hold more
// than the byte bound.
Status BoundRecipe(const Plan& plan, const SampleGenOptions& o, const std::string& name,
                   std::map<std::string, int64_t>& sizes);

// Recipes (sample_recipes.cc).

// One sample's name, sizes and how its floats and integers are filled.
struct Recipe {
  std::string name;
  std::map<std::string, int64_t> sizes;
  Mode float_mode = Mode::kTypical;
  Mode int_mode = Mode::kTypical;
  double scale = 1;
};

// The recipes of the kinds `o` asks for that apply to `plan` (sample_gen.h
// lists them), in that order; the relations applied to each one's sizes.
std::vector<Recipe> Recipes(const Plan& plan, const SampleGenOptions& o);

}  // namespace parity::sample_internal
