// The console's lines for what generated samples were made from: the input
// roles other than "other" and the size relations kept.
#pragma once

#include <string>
#include <vector>

#include "engine/inputs/sample_gen.h"

namespace parity {

// "input roles: input_ids ids, attention_mask mask" and "sizes kept
// together: total = past + seq"; none for a model whose inputs have no role.
std::vector<std::string> SampleNoteLines(const SampleNotes& notes);

}  // namespace parity
