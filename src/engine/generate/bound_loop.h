// The decode loop on an IO-bound session (step_session.h's bound and shared
// cache forms; issue 52 item 3, docs/generation.md "Deployed cache forms"),
// with the checks only those forms can make.
//
// Thread-compatible: one loop per session at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/generate/decode_loop.h"
#include "engine/generate/decode_search.h"
#include "engine/generate/generation_record.h"
#include "engine/generate/generation_result.h"
#include "engine/runner/step_session.h"

namespace parity {

// The record's KV pairs as the session names them (past, present).
CachePairs CachePairsOf(const GenerationRecord& record);

// RunDecodeLoop (decode_loop.h) in the session's cache form: the same
// steps, visitor, chooser and errors. A bound form appends its checks to
// `checks`:
//   cache_form   what was bound, PASS; FAIL when a buffer is sized wrong (a
//                present declared with another shape than its past, a loop
//                longer than the buffer holds: nothing runs; a present ORT
//                cannot write into its buffer: the step it failed at);
//   cache_write  (shared) after each step only the positions it was fed
//                differ in each cache: FAIL "step 3 wrote present_key_1 at
//                position 9, expected 8";
//   cache_read   (shared) each step rerun on a copy whose positions not yet
//                written hold kUnwrittenSentinel gives the same logits,
//                bitwise: FAIL naming the step and each cache it reads beyond
//                what was written.
// A step's `fed` holds the pasts as they were before the step (copies: the
// shared buffers are written in place), its `outputs` the buffers.
Status RunLoopInForm(const StepSession& session, const GenerationRecord& record, const TensorSet& prompt,
                     int64_t steps, const DecodeVisitor& visit, TokenChooser* chooser,
                     std::vector<GenerationCheck>& checks);

}  // namespace parity
