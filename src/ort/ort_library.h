// Which ONNX Runtime the process runs. parity links no libonnxruntime: it
// loads one at run time (dlopen) and reaches it only through its C API
// (OrtGetApiBase), so the ORT a user deploys can be the one parity validates
// with. One ORT per process, chosen before the first session, in this order
// (docs/providers.md, "Which ONNX Runtime"):
//   1. SelectOrtLibrary (the command line's --ort-library PATH);
//   2. the environment's PARITY_ORT_LIBRARY;
//   3. the bundled one: libonnxruntime.so.1 by the binary's rpath (the pinned
//      build parity was compiled against).
// No ORT types.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <string>

#include "core/status.h"

namespace parity::ort {

struct OrtLibraryInfo {
  std::string version;  // the library's own GetVersionString(): "1.31.1"
  std::string path;     // the file it was loaded from (dladdr of OrtGetApiBase, symlinks resolved)
  std::string origin;   // "--ort-library", "PARITY_ORT_LIBRARY", "bundled"
  int api_version = 0;  // the C API version parity asked for (ORT_API_VERSION of its headers)
};

// Loads the ORT at `path` (named in errors as `origin`) unless one is loaded
// already: then the same file is fine, another is kInvalidArgument (one ORT
// per process). kInvalidArgument, one line, when the file is missing, is not
// a shared library, has no OrtGetApiBase (not an ONNX Runtime), or is an ORT
// older than the C API version parity needs.
Status SelectOrtLibrary(const std::string& path, const std::string& origin = "--ort-library");

// The ORT of the process: the selected one, else PARITY_ORT_LIBRARY's, else
// the bundled one, loaded now if not yet. The error of that load otherwise
// (the same error on every later call).
Result<OrtLibraryInfo> LoadedOrtLibrary();

// The C API version parity needs: a library must serve it.
int RequiredOrtApiVersion();

}  // namespace parity::ort
