// Which ONNX Runtime ran (ort/ort_library.h): the one source of every
// report's ORT facts (engine/run/environment.h) and of what an ORT Runner
// says it is (runner.h RanWhat).
#pragma once

#include <string>

namespace parity {

struct OrtFact {
  std::string version;  // its own GetVersionString(): "1.31.1"
  std::string library;  // the libonnxruntime file (dladdr of OrtGetApiBase)
  std::string origin;   // "--ort-library", "PARITY_ORT_LIBRARY", "bundled"
};
// Loads the ORT if no command has yet (ort::LoadedOrtLibrary); cheap after.
OrtFact CurrentOrt();

}  // namespace parity
