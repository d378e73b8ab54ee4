// The decode step's session in the cache form it is served with (issue 52
// item 3, docs/generation.md "Deployed cache forms"), a session helper
// beneath the Runner: the generation loop keeps it for every step (and the
// prompt one token at a time) and binds its buffers, which a Runner's jobs
// do not.
//   fresh   ORT's plain Run: each step's presents are new ORT buffers, fed
//           back as the next pasts (decode_loop.h);
//   bound   IO binding (ort::BoundSession): each step's present buffers
//           allocated by parity at the step's length, bound as the outputs,
//           fed back as the next pasts;
//   shared  IO binding with past and present sharing one buffer of the
//           maximum length (ORT GenAI's `past_present_share_buffer`): the
//           step writes its positions in place (bound_loop.h);
//   auto    shared when every KV pair's past and present are declared alike
//           with a static length (LooksShared), else fresh.
// CPU buffers only (CUDA binding is not done).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/runner/cache_form.h"
#include "ort/io_binding.h"
#include "ort/session.h"

namespace parity {

// A step's KV caches by name: (past input, present output) per pair.
using CachePairs = std::vector<std::pair<std::string, std::string>>;

// Whether every pair's past and present are declared with one shape whose
// cache length (axis rank - 2, [batch, heads, length, dim]) is static: the
// model writes its cache in place into a buffer of that maximum length.
bool LooksShared(const std::vector<ort::TensorInfo>& inputs, const std::vector<ort::TensorInfo>& outputs,
                 const CachePairs& kv);

class StepSession {
 public:
  // Loads `path` for `form` (kAuto resolved: a plain session is made first
  // to read the declared shapes, and replaced by a bound one when they look
  // shared; one session alive at a time). Errors: ORT's.
  static Result<StepSession> Open(const std::string& path, const RunConfig& config, CacheForm form,
                                  const CachePairs& kv);

  CacheForm form() const { return form_; }  // never kAuto
  bool detected() const { return detected_; }  // kAuto chose the form
  const std::vector<ort::TensorInfo>& inputs() const;
  const std::vector<ort::TensorInfo>& outputs() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  // The plain session of the fresh form; null for the bound forms.
  const ort::Session* plain() const { return plain_ ? &*plain_ : nullptr; }

  // One step with every output in a new ORT buffer (wrapped, no copy).
  Result<TensorSet> Run(const TensorSet& inputs) const;
  // Bound forms only: the outputs in `into` written into those tensors.
  Result<TensorSet> RunInto(const TensorSet& inputs, const TensorSet& into) const;

 private:
  CacheForm form_ = CacheForm::kFresh;
  bool detected_ = false;
  std::optional<ort::Session> plain_;
  std::optional<ort::BoundSession> bound_;
};

}  // namespace parity
