// Test helpers for the tests of src/onnx and above: raw file writes, the
// ONNX node-test data, the smallest model (Relu), a model's intermediate
// tensors, and TempDir (core/testing/temp_dir.h).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/testing/temp_dir.h"
#include "onnx/builder.h"
#include "onnx/graph.h"
#include "onnx/model.h"

namespace parity::testing {

inline void WriteRaw(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string ReadRaw(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline const std::filesystem::path kOnnxNodeData = "/usr/share/libonnx-testdata/data/node";

// y = Relu(x), x float32 [1, 2]: the smallest model that runs.
inline Model ReluModel() {
  ModelBuilder b;
  b.Output(b.Relu(b.Input("x", DType::kFloat32, Shape{1, 2})), "y");
  auto m = b.Build();
  EXPECT_TRUE(m.has_value());
  return std::move(*m);
}

// The names of `m`'s intermediate tensors (IntermediateTensors: in
// topological order, graph outputs included); a failed expectation when the
// graph view cannot be built.
inline std::vector<std::string> Intermediates(const Model& m) {
  auto g = BuildGraphView(m);
  EXPECT_TRUE(g.has_value());
  std::vector<std::string> names;
  if (g)
    for (const auto& t : IntermediateTensors(*g)) names.push_back(t.name);
  return names;
}

}  // namespace parity::testing
