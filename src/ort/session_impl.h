// INTERNAL to src/ort/: Session's hidden state, shared by session.cc
// (creation, model facts) and session_run.cc (running).
#pragma once

#include <onnxruntime_cxx_api.h>

#include <optional>
#include <string>
#include <vector>

#include "ort/session.h"

namespace parity::ort {

// Counts the sessions alive (LiveSessions): one is held by each Impl whose
// Ort::Session was created.
class LiveSessionToken {
 public:
  LiveSessionToken();
  ~LiveSessionToken();
  LiveSessionToken(const LiveSessionToken&) = delete;
  LiveSessionToken& operator=(const LiveSessionToken&) = delete;
};

// What a loaded ORT session holds: Session's state, and that of the other
// ways to run one (io_binding.h's BoundSession).
struct SessionCore {
  Ort::Session session{nullptr};
  std::optional<LiveSessionToken> live;  // set once `session` exists; destroyed with it
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  double creation_ms = 0;
  std::vector<std::string> optimizer_log;
  std::vector<std::string> modified_optimizers;
  bool profiling = false;
  std::vector<EpAssignment> ep_assignment;
};

struct Session::Impl : SessionCore {};

// ORT's library loaded and its environment ready: call before making a
// SessionCore (an empty one destroyed with no ORT loaded would release its
// Ort::Session through a null API table).
Status PrepareOrt();

// Session::Create's work on `core` (made after PrepareOrt): its errors.
Status LoadSessionCore(SessionCore& core, const ModelSource& model, const RunConfig& config,
                       const SessionExtras& extras);

}  // namespace parity::ort
