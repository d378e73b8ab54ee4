// Execution provider names: parity's short names ("cpu", "cuda") and ORT's
// ("CPUExecutionProvider"). No ORT types; the registration itself lives in
// providers.cc behind AppendProviders (ort_providers.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parity::ort {

// ORT's name for a provider given by parity's short name (any case) or by
// ORT's own name; nullopt when parity does not know it.
std::optional<std::string> ProviderOrtName(std::string_view name);
// parity's short name for ORT's name ("CUDAExecutionProvider" -> "cuda");
// ORT's name itself when parity has no short one.
std::string ProviderShortName(std::string_view ort_name);
// Short names parity knows, for messages.
std::vector<std::string> KnownProviderNames();

}  // namespace parity::ort
