// INTERNAL to src/engine/inputs/sample_*: the resolved plan of one input and the
// value filling of one tensor. Portable determinism: the stream is
// splitmix64 and the normal draw is Box-Muller, not the standard library's
// implementation-defined distributions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "engine/inputs/sample_gen.h"

namespace parity::sample_internal {

struct Axis {
  int64_t fixed = -1;  // >= 0 when the size is fixed
  std::string symbol;  // non-empty when dynamic
};

struct InputPlan {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<Axis> axes;
  int64_t vocab = 0;  // > 0 when the input feeds a Gather as indices
  // An integer input that sets an iteration count or a size (a Loop's trip
  // count, a Range's bounds, a shape): typical values in [1, 8], never
  // above kCountMax (kDtypeMax leaves it typical).
  bool count = false;
  std::optional<ValueRange> range;
  InputRole role = InputRole::kOther;  // RoleOf: what the values mean
};

enum class Mode {
  kTypical,  // see sample_gen.h; times `scale` for floats
  kZeros,
  kDtypeMax,    // every element at the dtype's largest value (counts: typical)
  kCountMax,    // counts at their modest max (CountMax); other inputs typical
  kNaN,         // typical, a few elements NaN
  kInf,         // typical, a few elements +Inf / -Inf alternately
  kOutOfRange,  // typical ids, a few at vocab, vocab + 1, ...
  kNegative,    // typical ids, a few at -1, -2, ...
  kEdges,       // ids alternately 0 and vocab - 1; masks all ones
};

// The largest value generated for a count: kCountMax for a count of up to
// three elements; smaller for more, so that a shape's product stays under
// 2^20 elements.
inline constexpr int64_t kCountMax = 64;
int64_t CountMax(const InputPlan& in, int64_t elements);

// The stream seed of one input of one sample.
uint64_t StreamSeed(uint64_t seed, std::string_view sample, std::string_view input);

// Element i of `t` set to v, converted to its dtype (integers saturate).
void Store(Tensor& t, int64_t i, double v);

// Fills every element of `t` (dtype and shape already set).
void Fill(Tensor& t, const InputPlan& in, Mode mode, double scale, uint64_t stream_seed);

// Roles and size relations (sample_roles.cc).

// Sets each input's role: the user's (`given`) first, then what the graph
// showed (vocab: ids; count), then the name and type (RoleFromName).
void AssignRoles(std::vector<InputPlan>& inputs, const std::map<std::string, InputRole>& given);

// Sizes that must move together: symbols that are one size (every cache's
// past length; a mask's length and the tokens' without a cache) and sums (a
// mask as long as the past and the new tokens).
struct Relations {
  std::map<std::string, std::string> same;                             // symbol -> the one it equals
  std::map<std::string, std::pair<std::string, std::string>> sums;     // symbol -> (a, b): a + b
  std::string seq;   // the tokens' length symbol; empty when none
  std::string past;  // the caches' length symbol; empty when none
  std::vector<std::string> Describe() const;
};

// The relations of `inputs` (roles assigned). A relation that `traced`
// sizes (a dump's sample) contradict is dropped; the user's --dim does not
// drop one (KeepRelations reconciles them).
Relations FindRelations(const std::vector<InputPlan>& inputs, const std::set<std::string>& batch_like,
                        const std::map<std::string, int64_t>& traced);

// The user's --dim sizes with the relations kept (issue 51): a derived
// symbol given (`total` of total = past + seq, `past1` of past1 = past) sets
// the free ones it determines (total=9 with seq=2: past 7); the sizes given
// are returned with those added. kInvalidArgument, one line, for sizes that
// contradict a relation (total=9, past=4, seq=2), a sum given alone (total=9:
// which part is the past is not known) or one below its given part.
Result<std::map<std::string, int64_t>> KeepRelations(const Relations& relations,
                                                     const std::map<std::string, int64_t>& given);

// Sets every related symbol of `sizes` from the free ones.
void ApplyRelations(const Relations& relations, std::map<std::string, int64_t>& sizes);

// Rewrites a mask's values by its role, in every mode but kZeros (kEdges:
// all ones), for a mask of `past` cached tokens then new ones: row 0 has no
// padding; row b > 0 has min(b, length - 1) zeros (never a row of padding
// only), by b % 3: 1 at the start (left padding: of the past in a decode
// step, of the prompt without one), 2 at the end of the past (a prompt
// right-padded, then decoded on; at the end when nothing is cached), 0 at
// the end (right padding). Other roles are left as Fill made them; so is an
// input given a --range (its values are the range's).
void FillRole(Tensor& t, const InputPlan& in, Mode mode, int64_t past);

// Positions by their role, in every mode but kZeros: the new tokens'
// positions continue the mask's kept tokens, row by row (the mask's cumulative
// sum - 1, as transformers' generate makes them: a left-padded row restarts
// at 0; a padded position holds 1); without a `mask` as long as `past` + the
// new tokens: past, past + 1, ... An input given a --range keeps Fill's values.
void FillPositions(Tensor& t, const InputPlan& in, Mode mode, int64_t past, const Tensor* mask);

}  // namespace parity::sample_internal
