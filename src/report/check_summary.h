// What every format of a check report says in its first lines, written once
// so that console, JSON, HTML and JUnit agree: what the model was judged
// against, and whether PyTorch was consulted.
#pragma once

#include <string>
#include <string_view>

#include "engine/check/check_result.h"

namespace parity {

// "torch" (a PyTorch dump), "reference_model" (--reference-model), or
// "config" (the same model under the reference config only).
std::string_view JudgedAgainstKind(const CheckReport& r);

// One line: "judged against: the PyTorch dump dump/ (6 samples) and the
// unfused run [disable]", or "... the same model under [disable] only;
// PyTorch was not consulted (give --torch DIR)".
std::string JudgedAgainst(const CheckReport& r);

}  // namespace parity
