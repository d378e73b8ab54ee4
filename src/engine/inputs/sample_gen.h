// Seeded input samples from a model's signature (`parity inputs`, and
// `parity check` when the user gives no --inputs).
//
// Shapes. Each input's declared dims are resolved: a known dim stays; a
// symbolic dim ("batch", "height") is shared by every input that names it;
// an unknown dim ("?") is private to its input and axis. A --shape override
// replaces an input's dims (numbers fix a dim, identifiers name a symbol);
// a --dim SYMBOL=N sets a symbol. Unset symbols default to:
//   1   batch-like: axis 0 of an input of rank >= 2, or a symbol containing
//       "batch" (any case);
//   32  anything else (spatial sizes, sequence lengths).
// Generated samples are bounded (issue 56, class 5: 32 for every dim of a
// rank-7 input is 2^30 elements): the defaulted dims (not --dim, not --shape
// numbers, not sizes kept equal to or summed from others) are halved,
// largest first, until every input holds at most max_input_elements
// (default 2^20) and a sample at most max_sample_bytes (default 1 GiB); every
// sample is fitted so, the dims its recipe sets itself kept. A sample that
// still holds more bytes (the model's fixed dims) is refused. The notes say
// which dims were made smaller. Ordinary models (rank <= 5, 32 per dynamic
// dim) are far below both.
// parity cannot know constraints the graph imposes on sizes (a Reshape to a
// fixed size, a downsampling factor); give --shape/--dim for such models.
//
// Samples (names are SAMPLE in the `SAMPLE/INPUT` keys of docs/contract.md):
//   typical                 floats N(0,1) or uniform in --range [LO, HI);
//                           integers feeding a Gather: ids in [0, vocab);
//                           counts (below): [1, 8], or --range [LO, HI);
//                           other integers in --range [LO, HI) or [0, 10);
//                           bool: fair coin
//   boundary_zeros          every input zero
//   boundary_large          typical floats x100
//   boundary_small          typical floats x1e-3
//   boundary_dtype_max      integer inputs not feeding a Gather and not
//                           counts at their dtype's max (only when there is
//                           one; counts stay typical)
//   boundary_count_max      counts at a modest max: 64 (fewer when a count
//                           holds more than 3 elements: the product stays
//                           under 2^20), or HI-1 of their --range (only when
//                           there is a count)
//   boundary_batch<N>       batch-like symbols at N = max(4, 2 x default)
//                           (only when one is dynamic)
//   boundary_min_size       other dynamic dims at `min_size` (default 1: the
//                           smallest size ONNX allows; a model that needs
//                           more fails here, which is worth knowing)
//   boundary_nonsquare      the last two dims of an input, when both are
//                           dynamic and independent, at H = d, W = 2d
//   anomaly_nan             typical with a few NaNs in every float input
//   anomaly_inf             typical with +Inf and -Inf in every float input
//   anomaly_empty           a dynamic dim (batch-like first) at 0
//   anomaly_out_of_range_ids  a few ids >= vocab in inputs feeding a Gather
//   anomaly_negative_ids    a few ids < 0 (ORT's Gather wraps -1 to the
//                           last row where PyTorch's embedding raises)
// Roles (sample_roles.cc, docs/inputs.md) change an input's values and add
// samples where they apply: ids (above; boundary_ids_edges: 0 and vocab-1),
// masks (0/1, a batch as served: row b > 0 holds min(b, length-1) zeros,
// left padding, a past right-padded or right padding by b % 3;
// boundary_mask_ones), positions (each row after the tokens its mask keeps,
// after the past; an input named *position* read by an embedding included),
// caches (one past length for all; boundary_past0: nothing cached), counts
// (below), images (uniform in [0, 1)). --range wins over every role's values.
// A sequence model's anomaly_empty empties the sequence, not the batch. Size
// relations: every cache's past is one size; a mask longer than the tokens is
// past + seq long, in every sample, --dim included (a --dim that breaks one is
// refused, kInvalidArgument).
// Samples that do not apply to the model (no float input, no dynamic dim,
// no Gather) are left out. Values are deterministic for a seed: each input
// of each sample draws from its own stream keyed by (seed, sample, input),
// so asking for fewer kinds leaves the others unchanged.
//
// A count is an integer input that sets how many iterations run or how many
// elements are made: it reaches a Loop's trip count, a Range's start, limit
// or delta, the shape of ConstantOfShape/Expand/Reshape, Tile's repeats,
// Resize's sizes, Pad's pads, TopK's K, OneHot's depth or NonMaxSuppression's
// box count, directly or through Cast/Squeeze/Unsqueeze/Reshape/Flatten/
// Identity/Concat/Add/Mul/Max/Min/Abs. It is never set to its dtype's max:
// a Loop asked for 2^63 iterations never ends (docs/inputs.md).
//
// The vocabulary of an integer input is the first dim of the data
// initializer of a Gather that reads the input as its indices, directly or
// through Cast/Unsqueeze/Reshape/Squeeze/Flatten (the smallest such vocab
// when several Gathers read it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "onnx/model.h"

namespace parity {

// A sample's kind (docs/contract.md (""sample"")): the three kinds parity
// generates, and `user` for samples the user gave.
enum class SampleKind { kTypical, kBoundary, kAnomaly, kUser };

// "typical", "boundary", "anomaly", "user".
std::string_view SampleKindName(SampleKind kind);
// The kind of a sample from its name, as GenerateSamples names them:
// "typical" exactly, "boundary_<what>", "anomaly_<what>"; kUser for any other
// name ("typical2", "boundary", "default", a user's own names). The one place
// a kind is read from a name.
SampleKind SampleKindOf(std::string_view sample_name);

// One token of a --shape override: a number, or a symbol to default or set.
struct DimSpec {
  int64_t value = -1;  // >= 0 when fixed
  std::string symbol;  // non-empty when symbolic
};

// What an input means, for the values and sizes it gets (sample_roles.cc).
enum class InputRole { kOther, kIds, kMask, kPositions, kCache, kCount, kImage };
// "other", "ids", "mask", "positions", "cache", "count", "image".
std::string_view InputRoleName(InputRole role);

struct ValueRange {
  double lo = 0;
  double hi = 1;
};

struct SampleGenOptions {
  std::vector<SampleKind> kinds = {SampleKind::kTypical, SampleKind::kBoundary,
                                   SampleKind::kAnomaly};  // never kUser
  uint64_t seed = 0;
  std::map<std::string, std::vector<DimSpec>> shapes;  // input name -> dims
  std::map<std::string, int64_t> dims;                 // symbol -> size
  std::map<std::string, ValueRange> ranges;            // input name -> range
  int64_t min_size = 1;                                // boundary_min_size
  std::map<std::string, InputRole> roles;              // input name -> role (--role)
  // Sizes seen elsewhere (a dump's traced sample, symbol -> size): the
  // witnesses of the size relations (one they contradict is dropped). Not
  // defaults: a detector traced at 640 would run every generated sample at
  // 640 (yolov8n's check: 4 s -> 34 s).
  std::map<std::string, int64_t> traced_dims;
  // Bounds on what is generated (above): --max-input-elements,
  // --max-generated-mib.
  int64_t max_input_elements = int64_t{1} << 20;
  int64_t max_sample_bytes = int64_t{1} << 30;
};

// Parsers for the command line's forms; errors (kInvalidArgument) quote the
// text and say what was expected.
// "typical,boundary,anomaly" (any subset, any order; "all").
Result<std::vector<SampleKind>> ParseSampleKinds(std::string_view text);
// "images:1x3xHxW" -> ("images", dims). Symbols are identifiers
// ([A-Za-z_][A-Za-z0-9_]*); numbers are >= 0.
Result<std::pair<std::string, std::vector<DimSpec>>> ParseShapeOverride(std::string_view text);
// "batch=4".
Result<std::pair<std::string, int64_t>> ParseDimOverride(std::string_view text);
// "images:-1,1" (LO < HI, both finite).
Result<std::pair<std::string, ValueRange>> ParseRangeOverride(std::string_view text);

// "attention_mask=mask": a role for an input (InputRoleName's words).
Result<std::pair<std::string, InputRole>> ParseRoleOverride(std::string_view text);

// What the samples were made from, for the report: each input's role (in
// model order) and the size relations kept ("total = past + seq").
struct SampleNotes {
  std::vector<std::pair<std::string, InputRole>> roles;
  std::vector<std::string> relations;
  // The defaulted dims made smaller to stay within the bounds ("d 8 (default
  // 32)"), and the line that says so; empty when none was.
  std::string bounded;
};

// The samples for `model` (precondition: model.valid()). Errors
// (kInvalidArgument) for an option naming an input the model lacks, a --shape
// whose rank or fixed dims contradict the model, or an input with no
// declared shape and no --shape; kUnsupported for string or non-tensor
// inputs.
// `notes`, when given, gets the roles and relations.
Result<std::vector<Sample>> GenerateSamples(const Model& model, const SampleGenOptions& options,
                                            SampleNotes* notes = nullptr);

// The typical sample alone (for commands that run one sample: locate,
// bench), with `options`' shapes, dims, ranges and roles; its kinds are
// ignored.
Result<Sample> GenerateTypicalSample(const Model& model, SampleGenOptions options);

}  // namespace parity
