#include "onnx/file_read.h"

#include <fmt/format.h>
#include <fmt/std.h>

#include <fstream>
#include <system_error>

namespace parity::onnx_adapter {

namespace fs = std::filesystem;

Result<std::string> ReadFileLimited(const fs::path& path, int64_t max_bytes) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return NotFound(fmt::format("{}: no such file", path.string()));
  if (!fs::is_regular_file(st)) return InvalidArgument(fmt::format("{}: not a regular file", path.string()));
  const auto size = fs::file_size(path, ec);
  if (ec) return InvalidArgument(fmt::format("{}: cannot stat: {}", path.string(), ec.message()));
  if (static_cast<int64_t>(size) > max_bytes)
    return InvalidArgument(
        fmt::format("{}: file is {} bytes, more than the limit of {} bytes", path.string(), size, max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(fmt::format("{}: cannot open for reading", path.string()));
  std::string bytes(size, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (static_cast<size_t>(in.gcount()) != size)
    return InvalidArgument(fmt::format("{}: read {} of {} bytes", path.string(), in.gcount(), size));
  return bytes;
}

Result<std::string> ReadFileRange(const fs::path& path, int64_t offset, int64_t length) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return NotFound(fmt::format("{}: no such file", path.string()));
  const auto size = static_cast<int64_t>(fs::file_size(path, ec));
  if (ec) return InvalidArgument(fmt::format("{}: cannot stat: {}", path.string(), ec.message()));
  if (offset < 0 || length < 0 || offset > size || length > size - offset)
    return Corrupt(fmt::format("{}: range [{}, {}) lies outside the file of {} bytes", path.string(), offset,
                               offset + length, size));
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(fmt::format("{}: cannot open for reading", path.string()));
  in.seekg(offset);
  std::string bytes(static_cast<size_t>(length), '\0');
  in.read(bytes.data(), length);
  if (in.gcount() != length)
    return Corrupt(fmt::format("{}: short read at offset {}", path.string(), offset));
  return bytes;
}

}  // namespace parity::onnx_adapter
