// `parity compare` holds no full-size temporary: on two 256 MiB inputs its
// peak resident memory stays under the inputs' size plus 10% (issue 3).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/npy.h"
#include "e2e_util.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

TEST(CompareMemory, PeakRssUnderInputsPlusTenPercent) {
  if (e2e::kSanitized) GTEST_SKIP() << e2e::kRssUnderAsan;
  const fs::path dir = e2e::MakeTempDir("parity-compare-mem");
  constexpr int64_t kElements = int64_t{64} << 20;  // 256 MiB of float32
  {
    Tensor a(DType::kFloat32, {kElements});
    auto v = a.mutable_view<float>();
    for (int64_t i = 0; i < kElements; ++i) v[i] = static_cast<float>(i % 1000) * 0.001f;
    ASSERT_TRUE(WriteNpy(dir / "ref.npy", a));
    v[12345] += 0.5f;  // one real difference
    ASSERT_TRUE(WriteNpy(dir / "test.npy", a));
  }
  const int64_t inputs = static_cast<int64_t>(fs::file_size(dir / "ref.npy") + fs::file_size(dir / "test.npy"));
  auto r = e2e::RunParity({"compare", (dir / "ref.npy").string(), (dir / "test.npy").string()});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the planted difference fails
  EXPECT_NE(r.out.find("[12345]"), std::string::npos) << r.out;
  std::printf("parity compare on 2 x 256 MiB: peak RSS %.1f MiB, inputs %.1f MiB (ratio %.3f)\n",
              r.peak_rss_bytes / 1048576.0, inputs / 1048576.0, static_cast<double>(r.peak_rss_bytes) / inputs);
  EXPECT_LT(r.peak_rss_bytes, inputs + inputs / 10);
}

}  // namespace
}  // namespace parity
