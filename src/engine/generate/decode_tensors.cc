#include "engine/generate/decode_tensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace parity {

Result<Tensor> LastPositionLogits(const Tensor& logits) {
  if (logits.rank() != 3 && logits.rank() != 2)
    return InvalidArgument(fmt::format("logits of shape {}: expected [batch, seq, vocab] or [batch, vocab]",
                                       ShapeToString(logits.shape())));
  const int64_t batch = logits.shape()[0], vocab = logits.shape().back();
  const int64_t seq = logits.rank() == 3 ? logits.shape()[1] : 1;
  if (seq == 0) return InvalidArgument("logits with no position");
  Tensor out(DType::kFloat32, {batch, vocab});
  auto dst = out.mutable_view<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t v = 0; v < vocab; ++v)
      dst[b * vocab + v] = static_cast<float>(logits.GetAsDouble((b * seq + seq - 1) * vocab + v));
  return out;
}

std::vector<int64_t> GreedyTokens(const Tensor& last) {
  const int64_t batch = last.shape()[0], vocab = last.shape()[1];
  std::vector<int64_t> tokens(batch, 0);
  auto v = last.view<float>();
  for (int64_t b = 0; b < batch; ++b) {
    int64_t best = 0;
    for (int64_t i = 1; i < vocab; ++i)
      if (v[b * vocab + i] > v[b * vocab + best]) best = i;
    tokens[b] = best;
  }
  return tokens;
}

Tensor TokenTensor(const std::vector<int64_t>& tokens, DType dtype) {
  Tensor t(dtype, {static_cast<int64_t>(tokens.size()), 1});
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (dtype == DType::kInt32)
      t.mutable_view<int32_t>()[i] = static_cast<int32_t>(tokens[i]);
    else
      t.mutable_view<int64_t>()[i] = tokens[i];
  }
  return t;
}

namespace {

// Copies [rows, cols_in] -> [rows, cols_out] with `fill` past the end or a
// column offset; element bytes of any fixed-size dtype.
Tensor CopyColumns(const Tensor& t, int64_t begin, int64_t cols_out) {
  Shape shape = t.shape();
  const int64_t cols_in = shape.back();
  shape.back() = cols_out;
  Tensor out(t.dtype(), shape);
  const size_t es = DTypeSize(t.dtype());
  const int64_t rows = cols_in ? t.size() / cols_in : 0;
  const int64_t take = std::min(cols_out, cols_in - begin);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out.mutable_data() + r * cols_out * es, t.data() + (r * cols_in + begin) * es, take * es);
  return out;
}

// Element `i` of a mask or flag set to 1 (int64, int32, float32, bool); any
// other dtype is unsupported for `what`.
Status SetOne(Tensor& t, int64_t i, std::string_view what) {
  switch (t.dtype()) {
    case DType::kInt64: t.mutable_view<int64_t>()[i] = 1; break;
    case DType::kInt32: t.mutable_view<int32_t>()[i] = 1; break;
    case DType::kFloat32: t.mutable_view<float>()[i] = 1; break;
    case DType::kBool: t.mutable_view<uint8_t>()[i] = 1; break;
    default: return Unsupported(fmt::format("{} of dtype {}", what, DTypeName(t.dtype())));
  }
  return {};
}

}  // namespace

Result<Tensor> AppendOnes(const Tensor& mask) {
  if (mask.rank() < 1 || mask.dtype() == DType::kString)
    return InvalidArgument(fmt::format("mask of shape {}: expected [batch, length]", ShapeToString(mask.shape())));
  Tensor out = CopyColumns(mask, 0, mask.shape().back() + 1);
  const int64_t cols = out.shape().back();
  for (int64_t i = cols - 1; i < out.size(); i += cols) PARITY_RETURN_IF_ERROR(SetOne(out, i, "mask"));
  return out;
}

Result<Tensor> NextPositions(const Tensor& positions) {
  if (positions.rank() < 1 || positions.shape().back() == 0)
    return InvalidArgument(fmt::format("positions of shape {}: expected [..., n>0]", ShapeToString(positions.shape())));
  Tensor out = CopyColumns(positions, positions.shape().back() - 1, 1);
  for (int64_t i = 0; i < out.size(); ++i) {
    if (out.dtype() == DType::kInt64)
      out.mutable_view<int64_t>()[i] += 1;
    else if (out.dtype() == DType::kInt32)
      out.mutable_view<int32_t>()[i] += 1;
    else
      return Unsupported(fmt::format("positions of dtype {}", DTypeName(out.dtype())));
  }
  return out;
}

Result<Tensor> AllOnes(const Tensor& flag) {
  PARITY_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(flag.dtype(), flag.shape()));
  for (int64_t i = 0; i < out.size(); ++i) PARITY_RETURN_IF_ERROR(SetOne(out, i, "a cache branch flag"));
  return out;
}

Result<TensorSet> NextFeeds(const StepFeedNames& names, const TensorSet& fed, const std::vector<int64_t>& tokens) {
  TensorSet next;
  for (const auto& [name, tensor] : fed) {
    if (name == names.token) {
      next.Set(name, TokenTensor(tokens, tensor.dtype()));
    } else if (name == names.mask) {
      PARITY_ASSIGN_OR_RETURN(Tensor mask, AppendOnes(tensor));
      next.Set(name, std::move(mask));
    } else if (name == names.positions) {
      PARITY_ASSIGN_OR_RETURN(Tensor pos, NextPositions(tensor));
      next.Set(name, std::move(pos));
    } else if (name == names.cache_branch) {
      PARITY_ASSIGN_OR_RETURN(Tensor flag, AllOnes(tensor));
      next.Set(name, std::move(flag));
    } else {
      next.Set(name, tensor);
    }
  }
  return next;
}

Result<Tensor> SliceLastAxis(const Tensor& t, int64_t begin, int64_t end) {
  if (t.rank() < 1 || begin < 0 || end < begin || end > t.shape().back() || t.dtype() == DType::kString)
    return InvalidArgument(fmt::format("slice [{}, {}) of a tensor of shape {}", begin, end, ShapeToString(t.shape())));
  return CopyColumns(t, begin, end - begin);
}

Result<Tensor> SliceAxis(const Tensor& present, int axis, int64_t length) {
  const Shape& s = present.shape();
  if (axis < 0 || axis >= present.rank() || length > s[axis] || present.dtype() == DType::kString)
    return InvalidArgument(fmt::format("the first {} along axis {} of shape {}", length, axis, ShapeToString(s)));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < present.rank(); ++i) inner *= s[i];
  Shape shape = s;
  shape[axis] = length;
  Tensor out(present.dtype(), shape);
  const size_t row = static_cast<size_t>(inner) * DTypeSize(present.dtype());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.mutable_data() + o * length * row, present.data() + o * s[axis] * row, length * row);
  return out;
}

Result<Tensor> KeptByMask(const Tensor& t, const Tensor& mask, bool last_position, int64_t* dropped) {
  if (dropped != nullptr) *dropped = 0;
  if (mask.rank() != 2 || t.rank() < 2 || t.shape()[0] != mask.shape()[0] || t.dtype() == DType::kString ||
      mask.dtype() == DType::kString)
    return t;
  const int64_t batch = mask.shape()[0], length = mask.shape()[1];
  int axis = -1;  // the positions' axis; -1: the rows (last_position)
  if (!last_position) {  // [batch, heads, length, dim] first: heads or dim may equal the length too
    if (t.rank() >= 3 && t.shape()[t.rank() - 2] == length) axis = static_cast<int>(t.rank()) - 2;
    for (int a = 1; a < t.rank() && axis < 0; ++a)
      if (t.shape()[a] == length) axis = a;
    if (axis < 0) return t;
  }
  int64_t inner = 1;
  for (int a = axis < 0 ? 1 : axis + 1; a < t.rank(); ++a) inner *= t.shape()[a];
  const int64_t per_row = t.size() / std::max<int64_t>(batch, 1);
  const size_t es = DTypeSize(t.dtype());
  Tensor out = t.Copy();
  int64_t count = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = axis < 0 ? length - 1 : 0; j < length; ++j) {
      if (mask.GetAsDouble(b * length + j) != 0) continue;
      ++count;
      if (axis < 0) {
        std::memset(out.mutable_data() + b * per_row * es, 0, per_row * es);
        continue;
      }
      const int64_t span = length * inner, spans = per_row / std::max<int64_t>(span, 1);
      for (int64_t o = 0; o < spans; ++o)
        std::memset(out.mutable_data() + (b * per_row + o * span + j * inner) * es, 0, inner * es);
    }
  if (dropped != nullptr) *dropped = count;
  return out;
}

}  // namespace parity
