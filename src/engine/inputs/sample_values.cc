#include "engine/inputs/sample_values.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace parity::sample_internal {
namespace {

class Stream {
 public:
  explicit Stream(uint64_t seed) : state_(seed) {}
  uint64_t Next() {  // splitmix64
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-53; }  // [0, 1)
  double Normal() {
    double u1 = 1.0 - Uniform();  // (0, 1]
    double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t state_;
};

template <typename T>
T SaturateTo(double v) {
  if (std::isnan(v)) return T{0};
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

}  // namespace

void Store(Tensor& t, int64_t i, double v) {
  std::byte* p = t.mutable_data();
  auto put = [&]<typename T>(T x) { reinterpret_cast<T*>(p)[i] = x; };
  switch (t.dtype()) {
    case DType::kFloat32:
      put(static_cast<float>(v));
      break;
    case DType::kFloat64:
      put(v);
      break;
    case DType::kFloat16:
      put(FloatToHalf(static_cast<float>(v)));
      break;
    case DType::kBFloat16:
      put(FloatToBFloat16(static_cast<float>(v)));
      break;
    case DType::kInt8:
      put(SaturateTo<int8_t>(v));
      break;
    case DType::kUInt8:
      put(SaturateTo<uint8_t>(v));
      break;
    case DType::kInt16:
      put(SaturateTo<int16_t>(v));
      break;
    case DType::kUInt16:
      put(SaturateTo<uint16_t>(v));
      break;
    case DType::kInt32:
      put(SaturateTo<int32_t>(v));
      break;
    case DType::kUInt32:
      put(SaturateTo<uint32_t>(v));
      break;
    case DType::kInt64:
      put(SaturateTo<int64_t>(v));
      break;
    case DType::kUInt64:
      put(SaturateTo<uint64_t>(v));
      break;
    case DType::kBool:
      put(static_cast<uint8_t>(v != 0));
      break;
    case DType::kString:
      break;
  }
}

namespace {

// The largest value of the dtype (float16/bfloat16/float32/float64 too).
double DtypeMax(DType d) {
  switch (d) {
    case DType::kFloat16:
      return 65504.0;
    case DType::kBFloat16:
      return 3.3895313892515355e38;
    case DType::kFloat32:
      return std::numeric_limits<float>::max();
    case DType::kFloat64:
      return std::numeric_limits<double>::max();
    case DType::kInt8:
      return std::numeric_limits<int8_t>::max();
    case DType::kUInt8:
      return std::numeric_limits<uint8_t>::max();
    case DType::kInt16:
      return std::numeric_limits<int16_t>::max();
    case DType::kUInt16:
      return std::numeric_limits<uint16_t>::max();
    case DType::kInt32:
      return std::numeric_limits<int32_t>::max();
    case DType::kUInt32:
      return std::numeric_limits<uint32_t>::max();
    case DType::kInt64:
      return 9.3e18;  // saturates to INT64_MAX in Store
    case DType::kUInt64:
      return 1.9e19;  // saturates to UINT64_MAX
    default:
      return 1;
  }
}

double Typical(Stream& s, const InputPlan& in) {
  if (in.dtype == DType::kBool) return s.Uniform() < 0.5 ? 0 : 1;
  // A float given the role of ids or a count (--role) holds whole numbers as they would.
  if (IsFloating(in.dtype) && in.role != InputRole::kIds && in.role != InputRole::kCount && !in.count) {
    if (in.range) return in.range->lo + s.Uniform() * (in.range->hi - in.range->lo);
    if (in.role == InputRole::kImage) return s.Uniform();  // pixels in [0, 1), as a pipeline feeds them
    return s.Normal();
  }
  double lo = 0, hi = 10;
  if (in.range) {  // the user's range wins over every role's: ids, counts, plain integers
    lo = std::ceil(in.range->lo);
    hi = std::max(lo + 1, std::ceil(in.range->hi));  // [LO, HI) over integers
  } else if (in.count) {
    lo = 1, hi = 9;  // a few iterations: [1, 8]
  } else if (in.vocab > 0) {
    hi = static_cast<double>(in.vocab);
  }
  return std::min(hi - 1, std::floor(lo + s.Uniform() * (hi - lo)));
}

}  // namespace

int64_t CountMax(const InputPlan& in, int64_t elements) {
  if (in.range) return std::max<int64_t>(0, static_cast<int64_t>(std::ceil(in.range->hi)) - 1);
  const double per_element = std::pow(2.0, 20.0 / static_cast<double>(std::max<int64_t>(elements, 1)));
  return std::clamp<int64_t>(static_cast<int64_t>(per_element), 1, kCountMax);
}

uint64_t StreamSeed(uint64_t seed, std::string_view sample, std::string_view input) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over seed, sample, '/', input
  auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 0x100000001b3ull;
  };
  for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>(seed >> (8 * i)));
  for (char c : sample) mix(static_cast<unsigned char>(c));
  mix('/');
  for (char c : input) mix(static_cast<unsigned char>(c));
  return h;
}

namespace {

// An image-role input's typical values (issue 50): smooth like a photo, not
// independent noise per pixel. Uniform noise in [0, 1) drives a trained
// network's activations beyond anything it was calibrated or trained on
// (a healthy int8 copy, accurate on 256 of 256 real images, was 47% off on
// it), and makes random-weight networks ill-conditioned. Each plane is a
// coarse grid of uniform values every kCell pixels, bilinearly interpolated,
// plus a little fine texture; values stay in [0, 1).
constexpr int64_t kCell = 8;

bool SmoothImage(const Tensor& t, const InputPlan& in) {
  return in.role == InputRole::kImage && IsFloating(in.dtype) && !in.range && t.rank() >= 3 &&
         t.shape()[t.rank() - 1] >= kCell && t.shape()[t.rank() - 2] >= kCell;
}

void FillSmoothImage(Tensor& t, Stream& s, double scale) {
  const int64_t w = t.shape()[t.rank() - 1], h = t.shape()[t.rank() - 2];
  const int64_t gw = w / kCell + 2, gh = h / kCell + 2, planes = t.size() / (w * h);
  std::vector<double> grid(static_cast<size_t>(gw * gh));
  for (int64_t p = 0; p < planes; ++p) {
    for (double& g : grid) g = s.Uniform();
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const double fy = static_cast<double>(y) / kCell, fx = static_cast<double>(x) / kCell;
        const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
        const double ty = fy - static_cast<double>(y0), tx = fx - static_cast<double>(x0);
        auto at = [&](int64_t gy, int64_t gx) { return grid[static_cast<size_t>(gy * gw + gx)]; };
        const double v = (1 - ty) * ((1 - tx) * at(y0, x0) + tx * at(y0, x0 + 1)) +
                         ty * ((1 - tx) * at(y0 + 1, x0) + tx * at(y0 + 1, x0 + 1));
        const double textured = std::clamp(0.9 * v + 0.1 * s.Uniform(), 0.0, 1.0 - 0x1p-24);
        Store(t, (p * h + y) * w + x, textured * scale);
      }
  }
}

}  // namespace

void Fill(Tensor& t, const InputPlan& in, Mode mode, double scale, uint64_t stream_seed) {
  Stream s(stream_seed);
  const int64_t n = t.size();
  const bool smooth = SmoothImage(t, in) && (mode == Mode::kTypical || mode == Mode::kNaN || mode == Mode::kInf);
  if (smooth) FillSmoothImage(t, s, mode == Mode::kTypical ? scale : 1.0);
  for (int64_t i = 0; i < n && !smooth; ++i) {
    double v = 0;
    switch (mode) {
      case Mode::kZeros:
        v = 0;
        break;
      case Mode::kDtypeMax:
        // Only inputs with no role: an id, a mask, a position or a count at
        // its dtype's max is outside what the model means, not a boundary.
        v = in.count || in.role != InputRole::kOther ? Typical(s, in) : DtypeMax(in.dtype);
        break;
      case Mode::kCountMax:
        v = in.count ? static_cast<double>(CountMax(in, n)) : Typical(s, in);
        break;
      case Mode::kEdges:  // ids at the ends of their range (the vocabulary, or --range)
        v = in.vocab > 0 && in.range ? (i % 2 == 0 ? std::ceil(in.range->lo)
                                                   : std::max(std::ceil(in.range->lo), std::ceil(in.range->hi) - 1))
            : in.vocab > 0 ? static_cast<double>(i % 2 == 0 ? 0 : in.vocab - 1)
                           : Typical(s, in);
        break;
      default:
        v = Typical(s, in) * scale;
        break;
    }
    Store(t, i, v);
  }
  const bool ids_mode = mode == Mode::kOutOfRange || mode == Mode::kNegative;
  if (n == 0 || (mode != Mode::kNaN && mode != Mode::kInf && !ids_mode)) return;
  if (ids_mode && in.vocab == 0) return;
  if (!ids_mode && !IsFloating(in.dtype)) return;
  // A few elements, spread evenly, the first included.
  const int64_t count = std::clamp<int64_t>(n / 64, 1, 16);
  for (int64_t k = 0; k < count; ++k) {
    int64_t i = k * n / count;
    double v = mode == Mode::kNaN   ? std::numeric_limits<double>::quiet_NaN()
               : mode == Mode::kInf ? (k % 2 == 0 ? 1 : -1) * std::numeric_limits<double>::infinity()
               : mode == Mode::kNegative ? static_cast<double>(-1 - k)
                                    : static_cast<double>(in.vocab + k);
    Store(t, i, v);
  }
}

}  // namespace parity::sample_internal
