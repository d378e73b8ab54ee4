// Models and runtimes several end-to-end tests share (header-only, so only
// its users rebuild when it changes).
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/npz.h"
#include "core/tensor.h"
#include "e2e_util.h"
#include "engine/run/tensor_source.h"
#include "onnx/builder.h"

namespace parity::e2e {

// The onnxruntime wheel's library in this checkout's venv; empty when absent.
inline std::filesystem::path WheelOrt() {
  namespace fs = std::filesystem;
  const fs::path lib = fs::path(PARITY_PYTHON).parent_path().parent_path() / "lib";
  std::error_code ec;
  for (const auto& py : fs::directory_iterator(lib, ec))
    for (const auto& f : fs::directory_iterator(py.path() / "site-packages/onnxruntime/capi", ec))
      if (f.path().filename().string().starts_with("libonnxruntime.so.")) return fs::canonical(f.path());
  return {};
}

// The venv's onnxruntime-ep-openvino plugin library; empty when absent or
// under ASan (the plugin loads TBB with RTLD_DEEPBIND, which ASan refuses).
inline std::string OpenVinoPluginInVenv() {
  namespace fs = std::filesystem;
  if (kSanitized) return "";
  const fs::path sp = fs::path(PARITY_PYTHON).parent_path().parent_path() / "lib";
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(sp, ec)) {
    const fs::path lib = d.path() / "site-packages/onnxruntime_ep_openvino/libonnxruntime_providers_openvino_plugin.so";
    if (fs::exists(lib)) return lib.string();
  }
  return "";
}

// A model that keeps ORT busy: `matmuls` MatMuls of [size, size] by one
// shared weight, written to dir/slow.onnx, with `samples` samples of zeros
// in dir/slow_inputs.npz (`*inputs`).
inline std::filesystem::path SlowMatMulModel(const std::filesystem::path& dir, int64_t size, int matmuls,
                                             int samples, std::filesystem::path* inputs) {
  ModelBuilder b;
  std::string x = b.Input("x", DType::kFloat32, Shape{size, size});
  const std::string w = b.ConstWeight("w", {size, size}, 0.0f);
  for (int i = 0; i < matmuls; ++i) x = b.MatMul(x, w);
  b.Output(x, "y");
  auto model = b.Build();
  EXPECT_TRUE(model) << model.error().message();
  const std::filesystem::path path = dir / "slow.onnx";
  EXPECT_TRUE(model->Save(path));
  TensorSet set;
  auto t = Tensor::Create(DType::kFloat32, {size, size});
  for (int s = 0; s < samples; ++s) set.Set("s" + std::to_string(s) + "/x", *t);
  *inputs = dir / "slow_inputs.npz";
  EXPECT_TRUE(SaveTensors(*inputs, set));
  return path;
}

}  // namespace parity::e2e
