#include "compare/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>

#include "compare/metrics_kernel.h"

namespace parity {
namespace compare_internal {

void Merge(BlockStats& a, const BlockStats& b) {
  a.pairs += b.pairs;
  a.sum_abs += b.sum_abs;
  a.sum_sq += b.sum_sq;
  a.sum_rt += b.sum_rt;
  a.sum_rr += b.sum_rr;
  a.sum_tt += b.sum_tt;
  a.max_abs = std::max(a.max_abs, b.max_abs);
  a.max_rel = std::max(a.max_rel, b.max_rel);
  a.rel_undefined += b.rel_undefined;
  a.mismatches += b.mismatches;
  a.nan_ref += b.nan_ref;
  a.nan_test += b.nan_test;
  a.inf_ref += b.inf_ref;
  a.inf_test += b.inf_test;
  a.nan_mismatch += b.nan_mismatch;
  a.nan_equal += b.nan_equal;
  a.inf_equal += b.inf_equal;
  a.inf_mismatch += b.inf_mismatch;
  a.ref_min = std::min(a.ref_min, b.ref_min);
  a.ref_max = std::max(a.ref_max, b.ref_max);
  AddRefMoments(a, b.ref_n, b.ref_mean, b.ref_m2);
  for (int k = 0; k < kEdges; ++k) a.above[k] += b.above[k];
}

namespace {

// A chunk is the unit of work of one thread and of the ordered merge.
constexpr int64_t kChunk = 16 * kBlock;

// seed: the largest max_abs and max_rel of the elements before this chunk that
// this thread has seen. They start the chunk's, which changes no result (the
// totals are maxima, and the worst element is looked for in the first chunk
// that holds the total's max_abs) and lets a kernel skip the exact maxima of
// blocks that cannot reach them (metrics_f32_impl.h).
struct ChunkStats {
  BlockStats stats;
  int64_t max_abs_block = 0;  // offset of the first block raising stats.max_abs
};

struct Seed {
  double max_abs = -1;
  double max_rel = 0;
};

template <typename R, typename T>
ChunkStats RunChunk(const R* r, const T* t, int64_t n, const KernelParams& p, Seed seed) {
  ChunkStats c;
  BlockStats& s = c.stats;
  s.max_abs = seed.max_abs;
  s.max_rel = seed.max_rel;
  alignas(64) double scratch[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t len = std::min(kBlock, n - b);
    const double max_before = s.max_abs;
    if (!FastBlock(r + b, t + b, len, p, scratch, s)) SlowBlock(r + b, t + b, len, p, s);
    if (s.max_abs > max_before) c.max_abs_block = b;
  }
  return c;
}

int ChooseThreads(int requested, int64_t n) {
  if (requested == 1 || n < kParallelThreshold) return 1;
  int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int want = requested > 0 ? requested : hw;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(want, chunks)));
}

// Runs work(i0, i1) over [0, count) split into `threads` contiguous ranges.
template <typename Work>
void ForRanges(int64_t count, int threads, Work&& work) {
  if (threads <= 1 || count <= 1) {
    work(int64_t{0}, count);
    return;
  }
  std::vector<std::jthread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(work, count * i / threads, count * (i + 1) / threads);
}

struct Totals {
  BlockStats stats;
  int64_t max_flat = -1;
};

// A band chosen from the reference statistics of the pass itself
// (MetricsOptions::band_from_reference).
struct Deferral {
  std::function<MismatchBand(const BlockStats& merged)> choose;
  MismatchBand band;  // the chosen band, set by the pass
};

template <typename R, typename T>
Totals RunTyped(const R* r, const T* t, int64_t n, const KernelParams& p, int threads, Deferral* defer = nullptr) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<ChunkStats> partial(static_cast<size_t>(chunks));
  const int nt = ChooseThreads(threads, n);
  ForRanges(chunks, nt, [&](int64_t c0, int64_t c1) {
    Seed seed;
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t off = c * kChunk;
      partial[c] = RunChunk(r + off, t + off, std::min(kChunk, n - off), p, seed);
      // A deferred band needs each chunk's own max |d|: only max_rel is carried.
      seed = {defer != nullptr ? -1 : partial[c].stats.max_abs, partial[c].stats.max_rel};
    }
  });
  Totals out;
  for (const ChunkStats& c : partial) Merge(out.stats, c.stats);
  if (defer != nullptr) {
    // The pass counted with an infinite band. A finite pair mismatches only
    // when |d| > atol + rtol |r| >= atol: chunks whose max |d| stays within
    // atol keep their count (non-finite mismatches do not depend on the band);
    // the others are counted again with the chosen band.
    defer->band = defer->choose(out.stats);
    KernelParams q = p;
    q.atol = defer->band.atol;
    q.rtol = defer->band.rtol;
    std::vector<int64_t> redo;
    for (int64_t c = 0; c < chunks; ++c)
      if (!(partial[c].stats.max_abs <= q.atol)) redo.push_back(c);
    std::vector<int64_t> recount(redo.size());
    ForRanges(static_cast<int64_t>(redo.size()), ChooseThreads(threads, static_cast<int64_t>(redo.size()) * kChunk),
              [&](int64_t i0, int64_t i1) {
                for (int64_t i = i0; i < i1; ++i) {
                  const int64_t off = redo[i] * kChunk;
                  recount[i] = RunChunk(r + off, t + off, std::min(kChunk, n - off), q, Seed{}).stats.mismatches;
                }
              });
    for (size_t i = 0; i < redo.size(); ++i)
      out.stats.mismatches += recount[i] - partial[redo[i]].stats.mismatches;
  }
  if (out.stats.pairs > 0) {
    // The worst element: in the first chunk, and there in the first block,
    // that holds the maximum; searched there only.
    for (int64_t c = 0; c < chunks; ++c) {
      if (partial[c].stats.max_abs != out.stats.max_abs) continue;
      const int64_t off = c * kChunk + partial[c].max_abs_block;
      const int64_t i = FindFirstAbs(r + off, t + off, std::min(kBlock, n - off), out.stats.max_abs);
      if (i >= 0) out.max_flat = off + i;
      break;
    }
  }
  return out;
}

// Mixed dtypes other than float/float: convert chunk by chunk to double.
Totals RunConverted(const Tensor& ref, const Tensor& test, const KernelParams& p) {
  const int64_t n = ref.size();
  Totals out;
  std::vector<double> rb(kBlock), tb(kBlock);
  std::vector<BlockStats> per_block;
  std::vector<double> scratch(kBlock);
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t len = std::min(kBlock, n - b);
    for (int64_t i = 0; i < len; ++i) {
      rb[i] = ref.GetAsDouble(b + i);
      tb[i] = test.GetAsDouble(b + i);
    }
    BlockStats s;
    if (!FastBlock(rb.data(), tb.data(), len, p, scratch.data(), s)) SlowBlock(rb.data(), tb.data(), len, p, s);
    per_block.push_back(s);
    Merge(out.stats, s);
  }
  for (size_t k = 0; k < per_block.size() && out.stats.pairs > 0; ++k) {
    if (per_block[k].max_abs != out.stats.max_abs) continue;
    const int64_t b = static_cast<int64_t>(k) * kBlock;
    const int64_t len = std::min(kBlock, n - b);
    for (int64_t i = 0; i < len; ++i) {
      rb[i] = ref.GetAsDouble(b + i);
      tb[i] = test.GetAsDouble(b + i);
    }
    out.max_flat = b + FindFirstAbs(rb.data(), tb.data(), len, out.stats.max_abs);
    break;
  }
  return out;
}

template <typename R>
Totals DispatchTest(const R* r, const Tensor& test, const KernelParams& p, int threads, Deferral* defer) {
  const int64_t n = test.size();
  const void* t = test.data();
  switch (test.dtype()) {
    case DType::kFloat32: return RunTyped(r, static_cast<const float*>(t), n, p, threads, defer);
    case DType::kFloat64: return RunTyped(r, static_cast<const double*>(t), n, p, threads, defer);
    case DType::kFloat16: return RunTyped(r, static_cast<const F16*>(t), n, p, threads, defer);
    case DType::kBFloat16: return RunTyped(r, static_cast<const BF16*>(t), n, p, threads, defer);
    default: return {};
  }
}

template <typename V>
Totals RunSame(const Tensor& ref, const Tensor& test, const KernelParams& p, int threads) {
  return RunTyped(reinterpret_cast<const V*>(ref.data()), reinterpret_cast<const V*>(test.data()), ref.size(), p,
                  threads);
}

// Floating pairs only take a deferred band; see MetricsOptions.
Totals Dispatch(const Tensor& ref, const Tensor& test, const KernelParams& p, int threads,
                Deferral* defer = nullptr) {
  if (IsFloating(ref.dtype()) && IsFloating(test.dtype())) {
    const void* r = ref.data();
    switch (ref.dtype()) {
      case DType::kFloat32: return DispatchTest(static_cast<const float*>(r), test, p, threads, defer);
      case DType::kFloat64: return DispatchTest(static_cast<const double*>(r), test, p, threads, defer);
      case DType::kFloat16: return DispatchTest(static_cast<const F16*>(r), test, p, threads, defer);
      default: return DispatchTest(static_cast<const BF16*>(r), test, p, threads, defer);
    }
  }
  if (ref.dtype() != test.dtype()) return RunConverted(ref, test, p);
  switch (ref.dtype()) {
    case DType::kInt8: return RunSame<int8_t>(ref, test, p, threads);
    case DType::kUInt8: return RunSame<uint8_t>(ref, test, p, threads);
    case DType::kInt16: return RunSame<int16_t>(ref, test, p, threads);
    case DType::kUInt16: return RunSame<uint16_t>(ref, test, p, threads);
    case DType::kInt32: return RunSame<int32_t>(ref, test, p, threads);
    case DType::kUInt32: return RunSame<uint32_t>(ref, test, p, threads);
    case DType::kInt64: return RunSame<int64_t>(ref, test, p, threads);
    case DType::kUInt64: return RunSame<uint64_t>(ref, test, p, threads);
    default: return RunSame<Bool8>(ref, test, p, threads);
  }
}

TensorMetrics Finish(const Totals& tot, const Tensor& ref, const Tensor& test, const MetricsOptions& options,
                     const KernelParams& o) {
  const BlockStats& s = tot.stats;
  TensorMetrics m;
  m.count = ref.size();
  m.finite_pairs = s.pairs;
  m.atol = options.atol;
  m.rtol = options.rtol;
  m.mismatches = s.mismatches;
  m.nan_ref = s.nan_ref;
  m.nan_test = s.nan_test;
  m.inf_ref = s.inf_ref;
  m.inf_test = s.inf_test;
  m.nan_mismatch = s.nan_mismatch;
  m.nan_equal = s.nan_equal;
  m.inf_equal = s.inf_equal;
  m.inf_mismatch = s.inf_mismatch;
  m.rel_undefined = s.rel_undefined;
  m.ref_finite = s.ref_n;
  if (s.ref_n > 0) {
    m.ref_min = s.ref_min;
    m.ref_max = s.ref_max;
    m.ref_mean = o.ref_shift + s.ref_mean;
    m.ref_std = std::sqrt(s.ref_m2 / static_cast<double>(s.ref_n));
  }
  if (s.pairs > 0) {
    const double n = static_cast<double>(s.pairs);
    m.max_abs = s.max_abs;
    m.max_rel = s.max_rel;
    m.mean_abs = s.sum_abs / n;
    m.rmse = std::sqrt(s.sum_sq / n);
    if (tot.max_flat >= 0) {
      m.max_abs_flat_index = tot.max_flat;
      m.max_abs_index = UnravelIndex(tot.max_flat, ref.shape());
      m.ref_at_max = ref.GetAsDouble(tot.max_flat);
      m.test_at_max = test.GetAsDouble(tot.max_flat);
    }
  }
  const bool undefined = s.pairs == 0 && s.nan_mismatch + s.inf_mismatch > 0;
  if (undefined) {
    // Nothing finite to compare and the non-finite elements differ (an
    // all-NaN output): "identical" (1, +inf) would contradict the verdict.
    m.cosine = std::numeric_limits<double>::quiet_NaN();
    m.snr_db = std::numeric_limits<double>::quiet_NaN();
  } else if (s.sum_rr == 0 && s.sum_tt == 0) {
    m.cosine = 1;
  } else if (s.sum_rr == 0 || s.sum_tt == 0) {
    m.cosine = 0;
  } else {
    m.cosine = s.sum_rt / std::sqrt(s.sum_rr * s.sum_tt);
  }
  if (undefined) {
    // set above
  } else if (s.sum_sq == 0) {
    m.snr_db = std::numeric_limits<double>::infinity();
  } else {
    m.snr_db = 10 * std::log10(s.sum_rr / s.sum_sq);
  }
  int64_t below = s.pairs;  // elements at or below the current edge
  for (int k = 0; k < kEdges; ++k) {
    m.histogram[k] = below - s.above[k];
    below = s.above[k];
  }
  m.histogram[kEdges] = below;
  return m;
}

}  // namespace
}  // namespace compare_internal

std::vector<int64_t> UnravelIndex(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] <= 0) continue;
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  return idx;
}

Result<TensorMetrics> ComputeMetrics(const Tensor& ref, const Tensor& test, const MetricsOptions& options) {
  using namespace compare_internal;
  if (ref.size() != test.size()) {
    return InvalidArgument(fmt::format("element counts differ: reference {} {} vs test {} {}", ref.size(),
                                       ShapeToString(ref.shape()), test.size(), ShapeToString(test.shape())));
  }
  if (!(options.atol >= 0) || !(options.rtol >= 0)) {
    return InvalidArgument(fmt::format("tolerances must be >= 0 (atol {}, rtol {})", options.atol, options.rtol));
  }
  const bool rs = ref.dtype() == DType::kString, ts = test.dtype() == DType::kString;
  if (rs || ts) {
    if (!(rs && ts)) {
      return InvalidArgument(fmt::format("cannot compare {} with {}", DTypeName(ref.dtype()),
                                         DTypeName(test.dtype())));
    }
    TensorMetrics m;
    m.count = ref.size();
    if (options.band_from_reference) {  // strings compare equal or not: the band is reported only
      const MismatchBand band = options.band_from_reference(m);
      m.atol = band.atol;
      m.rtol = band.rtol;
    }
    for (int64_t i = 0; i < ref.size(); ++i) m.mismatches += ref.strings()[i] != test.strings()[i];
    m.finite_pairs = 0;
    return m;
  }
  KernelParams p{options.atol, options.rtol};
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double v = ref.GetAsDouble(i);
    if (std::isfinite(v)) {
      p.ref_shift = v;
      break;
    }
  }
  if (!options.band_from_reference) return Finish(Dispatch(ref, test, p, options.threads), ref, test, options, p);

  MetricsOptions chosen = options;
  chosen.band_from_reference = nullptr;
  auto check_band = [&chosen](const MismatchBand& band) -> Status {
    chosen.atol = band.atol;
    chosen.rtol = band.rtol;
    if (!(band.atol >= 0) || !(band.rtol >= 0))
      return InvalidArgument(fmt::format("tolerances must be >= 0 (atol {}, rtol {})", band.atol, band.rtol));
    return {};
  };
  if (!(IsFloating(ref.dtype()) && IsFloating(test.dtype()))) {
    PARITY_ASSIGN_OR_RETURN(TensorMetrics stats, ComputeMetrics(ref, ref, {.threads = options.threads}));
    PARITY_RETURN_IF_ERROR(check_band(options.band_from_reference(stats)));
    return ComputeMetrics(ref, test, chosen);
  }
  Deferral defer;
  defer.choose = [&](const BlockStats& merged) {
    return options.band_from_reference(Finish(Totals{merged, -1}, ref, ref, options, p));
  };
  p.atol = std::numeric_limits<double>::infinity();
  p.rtol = 0;
  const Totals totals = Dispatch(ref, test, p, options.threads, &defer);
  PARITY_RETURN_IF_ERROR(check_band(defer.band));
  return Finish(totals, ref, test, chosen, p);
}

}  // namespace parity
