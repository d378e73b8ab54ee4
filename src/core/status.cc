#include "core/status.h"

namespace parity {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kCorrupt: return "corrupt";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kRuntime: return "runtime";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

int Error::ExitCode() const {
  switch (code_) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
    case ErrorCode::kCorrupt:
    case ErrorCode::kUnsupported:
      return 2;
    case ErrorCode::kRuntime:
    case ErrorCode::kInternal:
      return 3;
  }
  return 3;
}

}  // namespace parity
