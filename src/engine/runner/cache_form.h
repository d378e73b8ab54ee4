// How a decode step's KV caches are served (step_session.h says what each
// form runs): its own header, for the options that carry it (check.h).
#pragma once

#include <string_view>

#include "core/status.h"

namespace parity {

enum class CacheForm { kAuto, kFresh, kBound, kShared };

// "auto", "fresh", "bound", "shared".
std::string_view CacheFormName(CacheForm form);
// The name's form; kInvalidArgument naming the choices.
Result<CacheForm> ParseCacheForm(std::string_view name);

}  // namespace parity
