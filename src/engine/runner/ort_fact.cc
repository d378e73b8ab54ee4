#include "engine/runner/ort_fact.h"

#include "ort/ort_library.h"

namespace parity {

OrtFact CurrentOrt() {
  auto lib = ort::LoadedOrtLibrary();
  if (!lib) return {};
  return {lib->version, lib->path, lib->origin};
}

}  // namespace parity
