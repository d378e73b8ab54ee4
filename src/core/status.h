// parity's single error type. Every fallible function returns Result<T>
// (std::expected<T, Error>) or Status (Result<void>); no exception crosses a
// library boundary. Each layer adds context with Error::With, so a message
// reads outermost-first: "model.onnx: node 'conv1' (Conv): shape mismatch".
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace parity {

enum class ErrorCode {
  kInvalidArgument,  // the user's input is wrong: bad option, malformed file
  kNotFound,         // a file, tensor or name that should exist does not
  kCorrupt,          // a file is truncated, fails its checksum or its header lies
  kUnsupported,      // valid, but parity (or the library below it) cannot do it
  kRuntime,          // ONNX Runtime failed while running a valid request
  kInternal,         // a bug in parity
};

const char* ErrorCodeName(ErrorCode code);

class Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is prefixed by `context: `.
  Error With(const std::string& context) const& { return Error(code_, context + ": " + message_); }
  Error With(const std::string& context) && {
    message_ = context + ": " + message_;
    return std::move(*this);
  }

  // Process exit code of docs/contract.md: 2 for the user's input, 3 for the runtime.
  int ExitCode() const;

 private:
  ErrorCode code_;
  std::string message_;
};

template <typename T>
using Result = std::expected<T, Error>;
using Status = Result<void>;

inline std::unexpected<Error> Fail(ErrorCode code, std::string message) {
  return std::unexpected<Error>(Error(code, std::move(message)));
}
inline std::unexpected<Error> InvalidArgument(std::string m) { return Fail(ErrorCode::kInvalidArgument, std::move(m)); }
inline std::unexpected<Error> NotFound(std::string m) { return Fail(ErrorCode::kNotFound, std::move(m)); }
inline std::unexpected<Error> Corrupt(std::string m) { return Fail(ErrorCode::kCorrupt, std::move(m)); }
inline std::unexpected<Error> Unsupported(std::string m) { return Fail(ErrorCode::kUnsupported, std::move(m)); }
inline std::unexpected<Error> RuntimeError(std::string m) { return Fail(ErrorCode::kRuntime, std::move(m)); }
inline std::unexpected<Error> InternalError(std::string m) { return Fail(ErrorCode::kInternal, std::move(m)); }

// Adds context to the error of a Result, passing a value through unchanged.
template <typename T>
Result<T> WithContext(Result<T> r, const std::string& context) {
  if (!r) return std::unexpected<Error>(std::move(r.error()).With(context));
  return r;
}

}  // namespace parity

// Evaluates a Status/Result expression and returns its error from the enclosing
// function. PARITY_ASSIGN_OR_RETURN(auto x, expr) binds the value.
#define PARITY_RETURN_IF_ERROR(expr)                                   \
  do {                                                                 \
    auto parity_status_ = (expr);                                      \
    if (!parity_status_) return std::unexpected(parity_status_.error()); \
  } while (0)

#define PARITY_CONCAT_INNER_(a, b) a##b
#define PARITY_CONCAT_(a, b) PARITY_CONCAT_INNER_(a, b)
#define PARITY_ASSIGN_OR_RETURN(lhs, expr) \
  PARITY_ASSIGN_OR_RETURN_IMPL_(PARITY_CONCAT_(parity_result_, __LINE__), lhs, expr)
#define PARITY_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)        \
  auto tmp = (expr);                                         \
  if (!tmp) return std::unexpected(std::move(tmp.error())); \
  lhs = std::move(*tmp)
