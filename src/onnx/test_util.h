// Test helpers for src/onnx tests: raw file writes, the ONNX node-test data,
// and TempDir (core/testing/temp_dir.h).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/testing/temp_dir.h"

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

}  // namespace parity::testing
