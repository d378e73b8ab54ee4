#include "engine/generate/bound_loop.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "engine/generate/cache_probe.h"
#include "engine/generate/decode_tensors.h"

namespace parity {
namespace {

const ort::TensorInfo* Info(const std::vector<ort::TensorInfo>& infos, const std::string& name) {
  for (const auto& i : infos)
    if (i.name == name) return &i;
  return nullptr;
}

// ORT's message on one line.
std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// `past` in a zeroed buffer `length` long along its cache axis, its own
// positions first (a copy: the buffer is written in place).
Tensor SharedBuffer(const Tensor& past, int64_t length) {
  const int axis = CacheAxis(past);
  if (past.shape()[axis] == length) return past.Copy();
  Shape shape = past.shape();
  shape[axis] = length;
  Tensor out(past.dtype(), shape);
  std::memset(out.mutable_data(), 0, out.byte_size());
  int64_t blocks = 1, inner = 1;
  for (int a = 0; a < axis; ++a) blocks *= shape[a];
  for (int a = axis + 1; a < past.rank(); ++a) inner *= shape[a];
  const size_t es = DTypeSize(past.dtype()), keep = std::min(past.shape()[axis], length);
  for (int64_t o = 0; o < blocks; ++o)
    std::memcpy(out.mutable_data() + o * length * inner * es, past.data() + o * past.shape()[axis] * inner * es,
                keep * inner * es);
  return out;
}

class BoundLoop {
 public:
  BoundLoop(const StepSession& s, const GenerationRecord& r, std::vector<GenerationCheck>& checks)
      : s_(s), r_(r), checks_(checks), shared_(s.form() == CacheForm::kShared) {}

  Status Run(const TensorSet& prompt, int64_t steps, const DecodeVisitor& visit, TokenChooser* chooser) {
    TensorSet fed = InputsFor(s_.input_names(), prompt);
    const Tensor* ids = fed.Find(r_.token_input);
    written_ = 0;
    if (shared_) {
      if (Status ok = PrepareShared(fed, steps, ids ? ids->shape().back() : 0); !ok) {
        checks_.push_back({"cache_form", Verdict::kFail, ok.error().message()});
        return std::unexpected(ok.error());
      }
    }
    Status done = Loop(fed, steps, visit, chooser);
    Finish();
    return done;
  }

 private:
  Status Loop(TensorSet& fed, int64_t steps, const DecodeVisitor& visit, TokenChooser* chooser) {
    for (int64_t k = 0; k < steps; ++k) {
      DecodeStepOutput step{.step = k};
      TensorSet as_fed = fed, outputs;
      PARITY_ASSIGN_OR_RETURN(outputs, WithContext(Step(k, fed, as_fed, step.ms), fmt::format("step {}", k)));
      PARITY_RETURN_IF_ERROR(ReadStep(r_, outputs, chooser, step));
      step.fed = &as_fed;
      step.outputs = &outputs;
      PARITY_RETURN_IF_ERROR(visit(step));
      ++steps_run_;
      if (k + 1 < steps) {
        PARITY_ASSIGN_OR_RETURN(fed, NextStepInputs(r_, fed, outputs, step.tokens, step.origins));
      }
    }
    return {};
  }

  // The pasts fed as the shared buffers of the maximum length; a buffer
  // sized wrong is the error (the check cache_form's text).
  Status PrepareShared(TensorSet& fed, int64_t steps, int64_t prompt_tokens) {
    // The prompt's positions (its position input, else 0 .. tokens - 1).
    const Tensor* pos = fed.Find(r_.positions_input);
    int64_t first = 0, last = prompt_tokens - 1;
    if (pos != nullptr && pos->size() > 0) {
      first = last = static_cast<int64_t>(pos->GetAsDouble(0));
      for (int64_t i = 1; i < pos->size(); ++i) {
        const auto p = static_cast<int64_t>(pos->GetAsDouble(i));
        first = std::min(first, p), last = std::max(last, p);
      }
    }
    const int64_t need = last + steps;  // the last step writes at last + steps - 1
    written_ = first;
    for (const KvPair& kv : r_.kv) {
      const Tensor* past = fed.Find(kv.past);
      const ort::TensorInfo* in = Info(s_.inputs(), kv.past);
      const ort::TensorInfo* out = Info(s_.outputs(), kv.present);
      if (!past || !in || !out || CacheAxis(*past) < 0)
        return InvalidArgument(fmt::format("the shared cache form needs {} of rank 3 or more in the prompt", kv.past));
      const int axis = CacheAxis(*past);
      if (in->rank_known && out->rank_known && out->shape.size() == in->shape.size()) {
        for (size_t d = 0; d < in->shape.size(); ++d)
          if (in->shape[d] >= 0 && out->shape[d] >= 0 && in->shape[d] != out->shape[d])
            return InvalidArgument(fmt::format(
                "{} is declared {} where the shared cache form needs {}'s {}: past and present must be one buffer "
                "of the maximum length, written in place", kv.present, ShapeToString(out->shape), kv.past,
                ShapeToString(in->shape)));
      }
      const int64_t declared = in->rank_known && static_cast<int>(in->shape.size()) > axis ? in->shape[axis] : -1;
      const int64_t length = declared > 0 ? declared : std::max(need, past->shape()[axis]);
      if (need > length)
        return InvalidArgument(fmt::format(
            "the loop writes positions up to {} ({} steps after position {}) but {}'s shared buffer holds {} "
            "positions: it is sized too small for this generation", need - 1, steps, last, kv.past, length));
      fed.Set(kv.past, SharedBuffer(*past, length));
      if (length_ == 0) length_ = length, shape_ = fed.Find(kv.past)->shape();
    }
    return {};
  }

  // One ORT call in the form: the outputs; `as_fed` gets the pasts as fed.
  Result<TensorSet> Step(int64_t k, const TensorSet& fed, TensorSet& as_fed, double& ms) {
    TensorSet into;
    for (const KvPair& kv : r_.kv) {
      const Tensor* past = fed.Find(kv.past);
      if (past == nullptr) continue;
      if (shared_) {
        as_fed.Set(kv.past, past->Copy());  // the buffer is written in place: keep what was fed
        into.Set(kv.present, *past);
      } else {
        into.Set(kv.present, PresentBuffer(*past, TokensFed(fed)));
      }
    }
    const auto start = std::chrono::steady_clock::now();
    auto out = s_.RunInto(fed, into);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!out) {
      const std::string what = shared_ ? fmt::format("the shared buffers {}", ShapeToString(shape_))
                                       : std::string("present buffers as long as their pasts and the step's tokens");
      if (bound_why_.empty())
        bound_why_ = fmt::format("step {}: a present does not fit {} ({})", k, what, OneLine(out.error().message()));
      return std::unexpected(Error(out.error().code(), OneLine(out.error().message())));
    }
    if (shared_) PARITY_RETURN_IF_ERROR(CheckShared(k, fed, as_fed, *out));
    return out;
  }

  int64_t TokensFed(const TensorSet& fed) const {
    const Tensor* ids = fed.Find(r_.token_input);
    return ids != nullptr && ids->rank() > 0 ? ids->shape().back() : 0;
  }

  static Tensor PresentBuffer(const Tensor& past, int64_t tokens) {
    Shape shape = past.shape();
    if (const int axis = CacheAxis(past); axis >= 0) shape[axis] += tokens;
    return Tensor(past.dtype(), shape);
  }

  // The positions each row was fed this step.
  std::vector<std::vector<int64_t>> FedPositions(const TensorSet& fed) const {
    const Tensor* ids = fed.Find(r_.token_input);
    const int64_t rows = ids && ids->rank() > 0 ? ids->shape().front() : 1, n = TokensFed(fed);
    std::vector<std::vector<int64_t>> p(static_cast<size_t>(rows));
    const Tensor* pos = fed.Find(r_.positions_input);
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t j = 0; j < n; ++j)
        p[b].push_back(pos && pos->size() == rows * n ? static_cast<int64_t>(pos->GetAsDouble(b * n + j))
                       : pos && pos->size() == n       ? static_cast<int64_t>(pos->GetAsDouble(j))
                                                       : written_ + j);
    return p;
  }

  Status CheckShared(int64_t k, const TensorSet& fed, const TensorSet& as_fed, const TensorSet& outputs);
  Status ProbeReads(int64_t k, const TensorSet& fed, const TensorSet& as_fed, const TensorSet& outputs,
                    const std::vector<int64_t>& from);
  void Finish();

  const StepSession& s_;
  const GenerationRecord& r_;
  std::vector<GenerationCheck>& checks_;
  const bool shared_;
  int64_t written_ = 0;  // positions fed so far (without a positions input)
  int64_t length_ = 0;   // the shared buffers' length
  Shape shape_;
  int64_t steps_run_ = 0, checked_ = 0, probed_ = 0, write_faults_ = 0, read_faults_ = 0;
  std::string bound_why_, write_why_, read_why_, read_unchecked_;
};

Status BoundLoop::CheckShared(int64_t k, const TensorSet& fed, const TensorSet& as_fed, const TensorSet& outputs) {
  const auto positions = FedPositions(fed);
  bool wrong = false;
  std::vector<int64_t> from;
  for (const auto& row : positions) from.push_back(row.empty() ? length_ : *std::min_element(row.begin(), row.end()));
  for (const KvPair& kv : r_.kv) {
    const Tensor* before = as_fed.Find(kv.past);
    const Tensor* after = outputs.Find(kv.present);
    if (!before || !after) continue;
    const auto changed = ChangedPositions(*before, *after);
    for (size_t b = 0; b < changed.size() && b < positions.size(); ++b) {
      std::vector<int64_t> stray, expected = positions[b];
      std::sort(expected.begin(), expected.end());
      for (int64_t j : changed[b])
        if (!std::binary_search(expected.begin(), expected.end(), j)) stray.push_back(j);
      if (stray.empty()) continue;
      wrong = true;
      std::vector<int64_t> left;  // fed, yet as it was
      for (int64_t j : expected)
        if (!std::binary_search(changed[b].begin(), changed[b].end(), j)) left.push_back(j);
      if (write_why_.empty())
        write_why_ = fmt::format("step {} wrote {}{} at position{} {}, expected {}{}", k, kv.present,
                                 changed.size() > 1 ? fmt::format(" (row {})", b) : "", stray.size() > 1 ? "s" : "",
                                 PositionList(stray), PositionList(expected),
                                 left.empty() ? "" : fmt::format(" (left as it was: {})", PositionList(left)));
    }
  }
  write_faults_ += wrong;
  ++checked_;
  for (const auto& row : positions) written_ = std::max(written_, row.empty() ? written_ : row.back() + 1);
  return ProbeReads(k, fed, as_fed, outputs, from);
}

Status BoundLoop::ProbeReads(int64_t k, const TensorSet& fed, const TensorSet& as_fed, const TensorSet& outputs,
                             const std::vector<int64_t>& from) {
  const Tensor* logits = outputs.Find(r_.logits_output);
  if (logits == nullptr || !read_unchecked_.empty()) return {};
  ++probed_;
  // The step rerun on copies of the pasts as fed, those of `filled` with their
  // unwritten positions set: how far its logits move.
  const auto probe = [&](const KvPair* only) -> Result<double> {
    TensorSet in = fed, into;
    for (const KvPair& kv : r_.kv) {
      const Tensor* before = as_fed.Find(kv.past);
      if (before == nullptr) continue;
      Tensor t = before->Copy();
      if (only == nullptr || only == &kv) {
        PARITY_ASSIGN_OR_RETURN(t, FillFrom(*before, from, kUnwrittenSentinel));
      }
      in.Set(kv.past, t);
      into.Set(kv.present, t);
    }
    PARITY_ASSIGN_OR_RETURN(TensorSet out, s_.RunInto(in, into));
    const Tensor* moved = out.Find(r_.logits_output);
    return moved != nullptr ? MaxAbsDiff(*logits, *moved) : 0.0;
  };
  auto all = probe(nullptr);
  if (!all && all.error().code() == ErrorCode::kUnsupported) {
    read_unchecked_ = all.error().message();
    return {};
  }
  PARITY_RETURN_IF_ERROR(WithContext(all, "the rerun with the unwritten positions set"));
  if (*all == 0) return {};
  ++read_faults_;
  if (!read_why_.empty()) return {};
  std::vector<std::string> names;
  for (const KvPair& kv : r_.kv) {
    PARITY_ASSIGN_OR_RETURN(double d, probe(&kv));
    if (d > 0) names.push_back(kv.present);
  }
  std::vector<std::string> starts;
  for (int64_t f : from) starts.push_back(std::to_string(f));
  read_why_ = fmt::format("step {} reads {} beyond what was written: rerun with the positions from {} on (not yet "
                          "written) set to {:g} instead of what the loop left there, its logits move by max_abs {:.3g}",
                          k, names.empty() ? "its caches (together)" : fmt::format("{}", fmt::join(names, ", ")),
                          fmt::join(starts, "/"), kUnwrittenSentinel, *all);
  return {};
}

void BoundLoop::Finish() {
  const bool failed_to_bind = !bound_why_.empty();
  if (!shared_) {
    checks_.push_back(failed_to_bind ? GenerationCheck{"cache_form", Verdict::kFail, bound_why_}
                                     : GenerationCheck{"cache_form", Verdict::kPass,
                                                       fmt::format("IO-bound: each step's presents written into "
                                                                   "buffers parity allocated at the step's length and "
                                                                   "fed back as the next pasts ({} steps)", steps_run_)});
    return;
  }
  checks_.push_back(failed_to_bind
                        ? GenerationCheck{"cache_form", Verdict::kFail, bound_why_}
                        : GenerationCheck{"cache_form", Verdict::kPass,
                                          fmt::format("shared past/present buffers {} ({} positions), IO-bound, each "
                                                      "step written in place ({} steps)", ShapeToString(shape_),
                                                      length_, steps_run_)});
  if (checked_ == 0) return;
  const std::string of = fmt::format(" ({} of {} steps)", write_faults_, checked_);
  checks_.push_back(write_why_.empty()
                        ? GenerationCheck{"cache_write", Verdict::kPass,
                                          fmt::format("every step wrote its caches at the positions it was fed and "
                                                      "nowhere else ({} steps)", checked_)}
                        : GenerationCheck{"cache_write", Verdict::kFail, write_why_ + of});
  if (!read_unchecked_.empty()) {
    checks_.push_back({"cache_read", Verdict::kUnchecked, "not checked: " + read_unchecked_});
  } else if (read_why_.empty()) {
    checks_.push_back({"cache_read", Verdict::kPass,
                       fmt::format("no step reads a cache position it has not written: each step rerun with those "
                                   "positions set to {:g} gives the same logits ({} steps)", kUnwrittenSentinel,
                                   probed_)});
  } else {
    checks_.push_back({"cache_read", Verdict::kFail, fmt::format("{} ({} of {} steps)", read_why_, read_faults_,
                                                                 probed_)});
  }
}

}  // namespace

CachePairs CachePairsOf(const GenerationRecord& record) {
  CachePairs pairs;
  for (const KvPair& kv : record.kv) pairs.emplace_back(kv.past, kv.present);
  return pairs;
}

Status RunLoopInForm(const StepSession& session, const GenerationRecord& record, const TensorSet& prompt,
                     int64_t steps, const DecodeVisitor& visit, TokenChooser* chooser,
                     std::vector<GenerationCheck>& checks) {
  if (session.plain() != nullptr) return RunDecodeLoop(*session.plain(), record, prompt, steps, visit, chooser);
  BoundLoop loop(session, record, checks);
  return loop.Run(prompt, steps, visit, chooser);
}

}  // namespace parity
