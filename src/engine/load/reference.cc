#include "engine/load/reference.h"

#include <fmt/format.h>

namespace parity {

std::string_view ReferenceKindName(Reference::Kind kind) {
  switch (kind) {
    case Reference::Kind::kConfig: return "config";
    case Reference::Kind::kModel: return "model";
    case Reference::Kind::kBaseline: return "baseline";
    case Reference::Kind::kTorchDump: return "torch";
  }
  return "?";
}

Status RequireOrtReference(const Reference& r, std::string_view command) {
  if (r.kind == Reference::Kind::kConfig || r.kind == Reference::Kind::kModel) return {};
  return InvalidArgument(fmt::format("{}: a {} reference is not supported here (a config or a reference model)",
                                     command, ReferenceKindName(r.kind)));
}

Status RequireTorchDump(const Reference& r, std::string_view command, std::string_view what) {
  if (r.is_torch()) return {};
  return InvalidArgument(fmt::format("{}: {} is a {}, not a dump", command, what, ReferenceKindName(r.kind)));
}

std::string ReferenceLabel(const Reference& r) {
  if (r.kind == Reference::Kind::kModel) return fmt::format("model:{} [{}]", r.path.string(), r.config.Label());
  return "onnx:" + r.config.Label();
}

Result<Reference> ParseReference(std::string_view spec, std::string_view option) {
  Reference r;
  constexpr std::string_view kTorch = "torch:";
  if (spec.starts_with(kTorch)) {
    if (spec.size() == kTorch.size())
      return InvalidArgument(fmt::format("{}: 'torch:' needs the dump directory (torch:DIR)", option));
    r.kind = Reference::Kind::kTorchDump;
    r.path = std::string(spec.substr(kTorch.size()));
    return r;  // the export is judged unfused
  }
  if (auto level = OptLevelFromName(std::string(spec))) {
    r.config.opt_level = *level;
    return r;
  }
  // A repro's reference.json is a stored config (docs/security.md).
  PARITY_ASSIGN_OR_RETURN(r.config,
                          WithContext(LoadRunConfig(std::string(spec), ConfigOrigin::kStored), std::string(option)));
  return r;
}

}  // namespace parity
