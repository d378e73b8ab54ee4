// Property tests: every metric equals a float64 NumPy computation of its
// definition (testdata/reference_metrics.py, run by the .venv's python, PARITY_PYTHON)
// within 1e-12 relative, counts and indices exactly.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compare/metrics.h"
#include "core/testing/temp_dir.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Converts float64 values to a tensor of `dtype` (narrowing as the dtype does).
Tensor Make(DType dtype, Shape shape, const std::vector<double>& v) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) {
    std::byte* p = t.mutable_data() + i * DTypeSize(dtype);
    auto put = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
    switch (dtype) {
      case DType::kFloat32: put(static_cast<float>(v[i])); break;
      case DType::kFloat64: put(v[i]); break;
      case DType::kFloat16: put(FloatToHalf(static_cast<float>(v[i]))); break;
      case DType::kBFloat16: put(FloatToBFloat16(static_cast<float>(v[i]))); break;
      case DType::kInt8: put(static_cast<int8_t>(v[i])); break;
      case DType::kUInt8: put(static_cast<uint8_t>(v[i])); break;
      case DType::kInt16: put(static_cast<int16_t>(v[i])); break;
      case DType::kUInt16: put(static_cast<uint16_t>(v[i])); break;
      case DType::kInt32: put(static_cast<int32_t>(v[i])); break;
      case DType::kUInt32: put(static_cast<uint32_t>(v[i])); break;
      case DType::kInt64: put(static_cast<int64_t>(v[i])); break;
      case DType::kUInt64: put(static_cast<uint64_t>(v[i])); break;
      case DType::kBool: put(static_cast<uint8_t>(v[i] != 0)); break;
      default: break;
    }
  }
  return t;
}

struct Case {
  std::string name;
  Tensor ref, test;
  double atol = 1e-4, rtol = 1e-3;
  int threads = 1;
};

std::vector<double> Randn(size_t n, uint64_t seed, double scale = 1, double offset = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 1);
  std::vector<double> v(n);
  for (double& x : v) x = offset + scale * g(rng);
  return v;
}

std::vector<double> Perturb(std::vector<double> v, uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 1);
  for (double& x : v) x += scale * g(rng);
  return v;
}

constexpr size_t kCaseLength = 5000;

// Random float32, and adversarial values: NaN and Inf on either side, zeros
// in the reference, denormals, 1e30, in each floating dtype.
void AddAdversarialCases(std::vector<Case>& cases) {
  const size_t n = kCaseLength;
  auto r = Randn(n, 1);
  cases.push_back({"random_f32", Make(DType::kFloat32, {50, 100}, r), Make(DType::kFloat32, {50, 100}, Perturb(r, 2, 1e-4))});
  std::vector<double> ar = Randn(n, 3), at = Perturb(ar, 4, 1e-3);
  const double den = std::numeric_limits<float>::denorm_min();
  for (size_t i = 0; i < n; i += 7) ar[i] = 0;                // zeros in ref
  for (size_t i = 1; i < n; i += 97) ar[i] = kNaN;            // NaN ref only
  for (size_t i = 2; i < n; i += 89) at[i] = kNaN;            // NaN test only
  for (size_t i = 3; i < n; i += 83) ar[i] = at[i] = kNaN;    // NaN both
  for (size_t i = 4; i < n; i += 79) ar[i] = at[i] = kInf;    // same inf
  for (size_t i = 5; i < n; i += 73) ar[i] = kInf, at[i] = -kInf;
  for (size_t i = 6; i < n; i += 71) at[i] = -kInf;
  for (size_t i = 8; i < n; i += 67) ar[i] = 5 * den, at[i] = 3 * den;
  for (size_t i = 9; i < n; i += 61) ar[i] = 1e30, at[i] = 1.0001e30;
  for (size_t i = 10; i < n; i += 59) ar[i] = -3e29, at[i] = 7e29;
  cases.push_back({"adversarial_f32", Make(DType::kFloat32, {n}, ar), Make(DType::kFloat32, {n}, at)});
  cases.push_back({"adversarial_f64", Make(DType::kFloat64, {n}, ar), Make(DType::kFloat64, {n}, at)});
  cases.push_back({"adversarial_f16", Make(DType::kFloat16, {n}, ar), Make(DType::kFloat16, {n}, at), 1e-2, 1e-2});
  cases.push_back({"adversarial_bf16", Make(DType::kBFloat16, {n}, ar), Make(DType::kBFloat16, {n}, at), 1e-2, 1e-2});
}

// Edge shapes and values, mixed dtypes, and every other dtype (integers exact).
void AddShapeAndDtypeCases(std::vector<Case>& cases) {
  const size_t n = kCaseLength;
  const auto r = Randn(n, 1);
  cases.push_back({"empty", Make(DType::kFloat32, {0, 3}, {}), Make(DType::kFloat32, {0, 3}, {})});
  cases.push_back({"scalar", Make(DType::kFloat32, {}, {2.5}), Make(DType::kFloat32, {}, {2.5001})});
  cases.push_back({"zeros", Make(DType::kFloat32, {4}, {0, 0, 0, 0}), Make(DType::kFloat32, {4}, {0, 1e-6, 0, 0})});
  cases.push_back({"identical", Make(DType::kFloat32, {n}, r), Make(DType::kFloat32, {n}, r)});
  // No finite pair: undefined cosine and SNR when the non-finite elements
  // differ, "identical" when they agree.
  cases.push_back({"all_nan_test", Make(DType::kFloat32, {3}, {1, 2, 3}), Make(DType::kFloat32, {3}, {kNaN, kNaN, kNaN})});
  cases.push_back({"all_nan_both", Make(DType::kFloat32, {2}, {kNaN, kNaN}), Make(DType::kFloat32, {2}, {kNaN, kNaN})});
  cases.push_back({"near_constant", Make(DType::kFloat64, {n}, Randn(n, 5, 1e-6, 1000)),
                   Make(DType::kFloat64, {n}, Randn(n, 6, 1e-6, 1000))});
  cases.push_back({"mixed_f32_f16", Make(DType::kFloat32, {n}, r), Make(DType::kFloat16, {n}, r), 1e-2, 1e-2});
  for (DType d : {DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    cases.push_back({std::string("random_") + std::string(DTypeName(d)), Make(d, {n}, r), Make(d, {n}, Perturb(r, 7, 1e-2)),
                     1e-2, 1e-2});
  }
  std::vector<double> ir = Randn(n, 8, 40), it = ir;
  for (size_t i = 0; i < n; i += 13) it[i] += 1;
  for (double& x : ir) x = std::round(std::fabs(x));
  for (double& x : it) x = std::round(std::fabs(x));
  for (DType d : {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32, DType::kUInt32,
                  DType::kInt64, DType::kUInt64, DType::kBool}) {
    cases.push_back({std::string("int_") + std::string(DTypeName(d)), Make(d, {n}, ir), Make(d, {n}, it), 0, 0});
  }
}

// float32 pairs go through bounds and screens (metrics_f32_impl.h) that
// must agree with the exact definitions: elements on the tolerance
// boundary, ReLU-like zeros, max_rel records in late blocks, near-constant
// blocks, decades of differences, tiny and huge magnitudes, rtol alone, a
// ragged tail.
void AddF32ScreenCases(std::vector<Case>& cases) {
  const size_t m = 70001;  // more than two chunks of 16 blocks; not a multiple of 8
  auto br = Randn(m, 11), bt = br;
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> u(-1, 1);
  for (size_t i = 0; i < m; ++i) {
    const float rf = static_cast<float>(br[i]);
    const double tol = 1e-4 + 1e-3 * std::fabs(static_cast<double>(rf));
    // About the boundary: some just inside, some just outside, in float32.
    bt[i] = (i % 3 == 0) ? rf + tol * (1 + 1e-6 * u(rng)) : rf + 1e-6 * u(rng);
  }
  cases.push_back({"boundary_f32", Make(DType::kFloat32, {m}, br), Make(DType::kFloat32, {m}, bt)});
  auto zr = Randn(m, 13), zt = Perturb(zr, 14, 1e-5);
  for (size_t i = 0; i < m; ++i) {
    if (zr[i] < 0) zr[i] = 0, zt[i] = (i % 5 == 0) ? 1e-7 : 0;  // ReLU; some zeros differ
  }
  cases.push_back({"relu_f32", Make(DType::kFloat32, {m}, zr), Make(DType::kFloat32, {m}, zt)});
  cases.push_back({"relu_rtol_only_f32", Make(DType::kFloat32, {m}, zr), Make(DType::kFloat32, {m}, zt), 0, 1e-3});
  std::vector<double> rr(m), rt(m);
  for (size_t i = 0; i < m; ++i) {  // |r| shrinks along the tensor: max_rel keeps rising
    rr[i] = (i % 2 ? 1 : -1) * (1.0 - static_cast<double>(i) / static_cast<double>(m + 1));
    rt[i] = rr[i] + 1e-5 * u(rng);
  }
  cases.push_back({"records_f32", Make(DType::kFloat32, {m}, rr), Make(DType::kFloat32, {m}, rt)});
  cases.push_back({"near_constant_f32", Make(DType::kFloat32, {m}, Randn(m, 15, 1e-3, 1000)),
                   Make(DType::kFloat32, {m}, Randn(m, 16, 1e-3, 1000))});
  std::vector<double> dr = Randn(m, 17), dt(m);
  for (size_t i = 0; i < m; ++i) dt[i] = dr[i] + (u(rng) < 0 ? -1 : 1) * std::pow(10.0, -12 + 14 * (u(rng) + 1) / 2);
  cases.push_back({"decades_f32", Make(DType::kFloat32, {m}, dr), Make(DType::kFloat32, {m}, dt)});
  auto tr = Randn(m, 18, 1e-36), tt = Perturb(tr, 19, 1e-40);  // normal, denormal and zero float32
  cases.push_back({"tiny_f32", Make(DType::kFloat32, {m}, tr), Make(DType::kFloat32, {m}, tt), 1e-40, 1e-3});
  auto hr = Randn(m, 20, 1e37), ht = Perturb(hr, 21, 1e36);  // |d| beyond float32's range
  for (size_t i = 0; i < m; i += 101) hr[i] = 3e38, ht[i] = -3e38;
  auto or_ = Randn(m, 22), ot = Perturb(or_, 23, 1e-5);  // |d| / |r| beyond float32's range
  for (size_t i = 0; i < m; i += 997) or_[i] = 2e-38, ot[i] = (i % 2 ? 1e29 : 3e28);
  cases.push_back({"rel_overflow_f32", Make(DType::kFloat32, {m}, or_), Make(DType::kFloat32, {m}, ot)});
  cases.push_back({"huge_f32", Make(DType::kFloat32, {m}, hr), Make(DType::kFloat32, {m}, ht), 1e-4, 2});
}

// |d| on each decade's literal, on its cut (metrics.h) and the float32
// and float64 neighbours of both, against r == 0 and against r = 1.
void AddHistogramCutCases(std::vector<Case>& cases) {
  std::vector<double> cr, ct64, ct32;
  for (size_t k = 1; k < kHistogramCuts.size(); ++k) {
    for (const double x : {kHistogramEdges[k], kHistogramCuts[k]}) {
      const float f = static_cast<float>(x);
      for (const double v : {x, std::nextafter(x, 0.0), std::nextafter(x, 1e300), static_cast<double>(f),
                             static_cast<double>(std::nextafter(f, 0.0f)),
                             static_cast<double>(std::nextafter(f, 1e30f))}) {
        for (const double base : {0.0, 1.0}) {
          cr.push_back(base);
          ct64.push_back(base + v);
          ct32.push_back(base + static_cast<float>(v));
        }
      }
    }
  }
  cases.push_back({"cuts_f64", Make(DType::kFloat64, {static_cast<int64_t>(cr.size())}, cr), Make(DType::kFloat64, {static_cast<int64_t>(cr.size())}, ct64)});
  cases.push_back({"cuts_f32", Make(DType::kFloat32, {static_cast<int64_t>(cr.size())}, cr), Make(DType::kFloat32, {static_cast<int64_t>(cr.size())}, ct32)});
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  AddAdversarialCases(cases);
  AddShapeAndDtypeCases(cases);
  AddF32ScreenCases(cases);
  AddHistogramCutCases(cases);
  // Large enough for threads: the ordered merge must still agree.
  const size_t big = (size_t{3} << 20) / 2;
  auto br = Randn(big, 9);
  cases.push_back({"threads_f32", Make(DType::kFloat32, {big}, br), Make(DType::kFloat32, {big}, Perturb(br, 10, 1e-5)),
                   1e-4, 1e-3, 2});
  return cases;
}

void ExpectClose(const std::string& what, double got, const std::string& want_text, double scale = 0) {
  const double want = std::stod(want_text);
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what;
  } else {
    const double tol = 1e-12 * std::max({std::fabs(want), std::fabs(got), scale});
    EXPECT_LE(std::fabs(got - want), tol) << what << ": parity " << got << " numpy " << want_text;
  }
}

TEST(MetricsVsNumpy, EveryMetricMatchesItsFloat64Definition) {
  if (!fs::exists(PARITY_PYTHON)) GTEST_SKIP() << PARITY_PYTHON " is missing (make creates .venv/)";
  const testing::TempDir tmp("parity_metrics");
  const fs::path& dir = tmp.path();
  const std::vector<Case> cases = Cases();
  nlohmann::json manifest = nlohmann::json::array();
  for (const Case& c : cases) {
    const fs::path rp = dir / (c.name + ".ref"), tp = dir / (c.name + ".test");
    std::ofstream(rp, std::ios::binary).write(reinterpret_cast<const char*>(c.ref.data()), c.ref.byte_size());
    std::ofstream(tp, std::ios::binary).write(reinterpret_cast<const char*>(c.test.data()), c.test.byte_size());
    manifest.push_back({{"name", c.name}, {"ref", rp.string()}, {"test", tp.string()},
                        {"ref_dtype", DTypeName(c.ref.dtype())}, {"test_dtype", DTypeName(c.test.dtype())},
                        {"atol", c.atol}, {"rtol", c.rtol}});
  }
  std::ofstream(dir / "manifest.json") << manifest.dump();
  const std::string cmd = PARITY_PYTHON " " + std::string(PARITY_SOURCE_DIR) +
                          "/src/compare/testdata/reference_metrics.py " + (dir / "manifest.json").string() + " " +
                          (dir / "out.json").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const nlohmann::json want = nlohmann::json::parse(std::ifstream(dir / "out.json"));

  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ComputeMetrics(c.ref, c.test, {.atol = c.atol, .rtol = c.rtol, .threads = c.threads});
    ASSERT_TRUE(got.has_value()) << got.error().message();
    const TensorMetrics& m = *got;
    const nlohmann::json& w = want.at(c.name);
    EXPECT_EQ(m.count, w["count"].get<int64_t>());
    EXPECT_EQ(m.finite_pairs, w["finite_pairs"].get<int64_t>());
    EXPECT_EQ(m.max_abs_flat_index, w["max_abs_flat_index"].get<int64_t>());
    for (const char* k : {"rel_undefined", "mismatches", "nan_ref", "nan_test", "inf_ref", "inf_test",
                          "nan_mismatch", "nan_equal", "inf_equal", "inf_mismatch", "ref_finite"}) {
      const int64_t v = std::string(k) == "rel_undefined" ? m.rel_undefined
                        : std::string(k) == "mismatches"  ? m.mismatches
                        : std::string(k) == "nan_ref"     ? m.nan_ref
                        : std::string(k) == "nan_test"    ? m.nan_test
                        : std::string(k) == "inf_ref"     ? m.inf_ref
                        : std::string(k) == "inf_test"    ? m.inf_test
                        : std::string(k) == "nan_mismatch" ? m.nan_mismatch
                        : std::string(k) == "nan_equal"   ? m.nan_equal
                        : std::string(k) == "inf_equal"   ? m.inf_equal
                        : std::string(k) == "inf_mismatch" ? m.inf_mismatch
                                                           : m.ref_finite;
      EXPECT_EQ(v, w[k].get<int64_t>()) << k;
    }
    EXPECT_EQ(std::vector<int64_t>(m.histogram.begin(), m.histogram.end()), w["histogram"].get<std::vector<int64_t>>());
    ExpectClose("max_abs", m.max_abs, w["max_abs"]);
    ExpectClose("max_rel", m.max_rel, w["max_rel"]);
    ExpectClose("mean_abs", m.mean_abs, w["mean_abs"]);
    ExpectClose("rmse", m.rmse, w["rmse"]);
    ExpectClose("cosine", m.cosine, w["cosine"], 1.0);  // bounded by 1: absolute 1e-12
    ExpectClose("snr_db", m.snr_db, w["snr_db"]);
    ExpectClose("ref_min", m.ref_min, w["ref_min"]);
    ExpectClose("ref_max", m.ref_max, w["ref_max"]);
    // The mean of data centred on 0 is relative to its spread.
    ExpectClose("ref_mean", m.ref_mean, w["ref_mean"], m.ref_std);
    ExpectClose("ref_std", m.ref_std, w["ref_std"]);
  }
}

}  // namespace
}  // namespace parity
