// An ONNX Runtime session run through IO binding (Ort::IoBinding), the way
// ORT GenAI and other servers run a decode step: every input bound to its
// tensor's buffer as it is, an output bound either to memory the caller
// allocated (a present buffer made ahead of the step, or the past's own
// memory: `past_present_share_buffer`, the cache written in place) or to
// ORT's CPU allocator. CPU memory only: binding CUDA memory needs a device
// allocator parity's loop does not make (not done: no GPU was lent).
//
// A session of its own (ort::Session has no binding): one alive at a time
// with the others (LiveSessions counts it). Thread-compatible: one Run at a
// time per BoundSession.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ort/session.h"
#include "ort/tensor_info.h"

namespace parity::ort {

struct SessionCore;  // session_impl.h

class BoundSession {
 public:
  // Loads the model under `config`; errors as Session::Create's.
  static Result<BoundSession> Create(const ModelSource& model, const RunConfig& config);

  BoundSession(BoundSession&&) noexcept;
  BoundSession& operator=(BoundSession&&) noexcept;
  ~BoundSession();

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // One bound run. `inputs` must name every model input (CheckInputs). An
  // output named in `into` is bound to that tensor's memory: ORT writes the
  // output there, in place (it may share its memory with an input: a cache
  // updated in place), and the tensor is returned as it is; its shape must be
  // the output's, else ORT's error (kInvalidArgument / kRuntime). Every
  // other output is bound to ORT's CPU allocator and returned wrapping ORT's
  // buffer (OutputBuffers::kBorrowed). An `into` name that is no output is
  // kInvalidArgument. Returns every output, in model order. The run obeys
  // the limits in force as Session::Run's does (ort/run_limits.h: a run
  // stopped is a kRuntime error naming the limit).
  Result<TensorSet> Run(const TensorSet& inputs, const TensorSet& into = {}) const;

 private:
  explicit BoundSession(std::shared_ptr<SessionCore> core);
  std::shared_ptr<SessionCore> core_;
};

}  // namespace parity::ort
