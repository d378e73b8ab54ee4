#include "onnx/file_read.h"

#include "core/regular_file.h"

namespace parity::onnx_adapter {

namespace fs = std::filesystem;

// Both go through core's RegularFile: a FIFO or a device given as a model,
// a .pb or an external data file is refused without blocking or reading it.
Result<std::string> ReadFileLimited(const fs::path& path, int64_t max_bytes) {
  return ReadRegularFile(path, max_bytes);
}

Result<std::string> ReadFileRange(const fs::path& path, int64_t offset, int64_t length) {
  return ReadRegularFileRange(path, offset, length);
}

}  // namespace parity::onnx_adapter
