#include "core/npy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/regular_file.h"

namespace parity {
namespace {

static_assert(std::endian::native == std::endian::little, "parity assumes a little-endian host");

class SpanSource : public ByteSource {
 public:
  explicit SpanSource(std::span<const std::byte> bytes) : bytes_(bytes) {}
  Result<size_t> Read(std::span<std::byte> out) override {
    const size_t n = std::min(out.size(), bytes_.size() - pos_);
    std::memcpy(out.data(), bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::span<const std::byte> bytes_;
  size_t pos_ = 0;
};

class FdSource : public ByteSource {
 public:
  explicit FdSource(int fd) : fd_(fd) {}
  ~FdSource() override { ::close(fd_); }
  Result<size_t> Read(std::span<std::byte> out) override {
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::read(fd_, out.data() + done, std::min<size_t>(out.size() - done, size_t{1} << 30));
      if (n < 0) {
        if (errno == EINTR) continue;
        return InvalidArgument(fmt::format("read error: {}", std::strerror(errno)));
      }
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    return done;
  }

 private:
  int fd_;
};

Status ReadExactly(ByteSource& in, std::span<std::byte> out, std::string_view what) {
  PARITY_ASSIGN_OR_RETURN(size_t n, in.Read(out));
  if (n != out.size())
    return Corrupt(fmt::format("truncated {}: expected {} bytes, got {}", what, out.size(), n));
  return {};
}

void ByteSwap(Tensor& t) {
  const size_t width = DTypeSize(t.dtype());
  std::byte* p = t.mutable_data();
  for (size_t i = 0, n = t.byte_size(); i < n; i += width) std::reverse(p + i, p + i + width);
}

// Reorders a tensor whose bytes are in Fortran (column-major) order into C
// order, as numpy's np.load does: the same values at the same indices. Takes a
// second buffer of the tensor's size for the duration of the copy.
Result<Tensor> FortranToC(Tensor f) {
  const Shape& shape = f.shape();
  const size_t rank = shape.size();
  if (rank < 2 || f.size() < 2) return f;  // the two orders coincide
  PARITY_ASSIGN_OR_RETURN(Tensor c, Tensor::Create(f.dtype(), shape));
  const size_t width = DTypeSize(f.dtype());
  // Column-major strides (in elements) of each axis of the source.
  std::vector<int64_t> stride(rank, 1);
  for (size_t k = 1; k < rank; ++k) stride[k] = stride[k - 1] * shape[k - 1];
  std::vector<int64_t> index(rank, 0);
  const std::byte* src = f.data();
  std::byte* dst = c.mutable_data();
  int64_t offset = 0;  // source element of the current C-order index
  const int64_t n = f.size();
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + static_cast<size_t>(i) * width, src + static_cast<size_t>(offset) * width, width);
    // Advance the C-order index: the last axis fastest.
    for (size_t k = rank; k-- > 0;) {
      offset += stride[k];
      if (++index[k] < shape[k]) break;
      offset -= stride[k] * shape[k];
      index[k] = 0;
    }
  }
  return c;
}

}  // namespace

Result<Tensor> ReadNpyFrom(ByteSource& in, uint64_t stream_size) {
  if (stream_size == 0) return Corrupt("empty file, not a .npy file");
  if (stream_size < kNpyPreambleBytes + 2)
    return Corrupt(fmt::format("{} bytes is too short for a .npy header", stream_size));
  std::string preamble(kNpyPreambleBytes, '\0');
  PARITY_RETURN_IF_ERROR(ReadExactly(in, std::as_writable_bytes(std::span(preamble)), "header"));
  PARITY_ASSIGN_OR_RETURN(size_t len_bytes, ParseNpyPreamble(preamble));

  std::byte len_field[4] = {};
  PARITY_RETURN_IF_ERROR(ReadExactly(in, std::span(len_field, len_bytes), "header"));
  uint64_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) header_len |= std::to_integer<uint64_t>(len_field[i]) << (8 * i);
  if (header_len > kNpyMaxHeaderBytes)
    return Corrupt(
        fmt::format("header length {} exceeds the limit of {} bytes", header_len, kNpyMaxHeaderBytes));
  const uint64_t prefix = kNpyPreambleBytes + len_bytes + header_len;
  if (prefix > stream_size)
    return Corrupt(
        fmt::format("truncated header: it declares {} bytes but the file has {}", prefix, stream_size));

  std::string dict(header_len, '\0');
  PARITY_RETURN_IF_ERROR(ReadExactly(in, std::as_writable_bytes(std::span(dict)), "header"));
  PARITY_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeaderDict(dict));

  // The size check that keeps a lying header from allocating anything.
  const uint64_t available = stream_size - prefix;
  if (h.data_bytes > available)
    return Corrupt(
        fmt::format("header declares {} bytes of data ({} {}) but the file has {} after its {}-byte header",
                    h.data_bytes, DTypeName(h.dtype), ShapeToString(h.shape), available, prefix));
  if (h.data_bytes < available)
    return Corrupt(
        fmt::format("{} trailing bytes after the {} bytes of data that the header declares ({} {})",
                    available - h.data_bytes, h.data_bytes, DTypeName(h.dtype), ShapeToString(h.shape)));

  PARITY_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(h.dtype, h.shape));
  PARITY_RETURN_IF_ERROR(ReadExactly(in, {t.mutable_data(), t.byte_size()}, "data"));
  if (h.big_endian) ByteSwap(t);
  if (h.fortran_order) return FortranToC(std::move(t));
  return t;
}

Result<Tensor> ParseNpy(std::span<const std::byte> bytes) {
  SpanSource src(bytes);
  return ReadNpyFrom(src, bytes.size());
}

Result<Tensor> ReadNpy(const std::filesystem::path& path) {
  // A FIFO or a device is refused without blocking (core/regular_file.h).
  PARITY_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path));
  const auto size = static_cast<uint64_t>(file.size());
  FdSource src(file.Release());
  return WithContext(ReadNpyFrom(src, size), path.string());
}

Result<std::vector<std::byte>> SerializeNpy(const Tensor& tensor) {
  PARITY_ASSIGN_OR_RETURN(std::string header, EncodeNpyHeader(tensor.dtype(), tensor.shape()));
  std::vector<std::byte> out(header.size() + tensor.byte_size());
  std::memcpy(out.data(), header.data(), header.size());
  if (tensor.byte_size() > 0) std::memcpy(out.data() + header.size(), tensor.data(), tensor.byte_size());
  return out;
}

Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor, Sync sync) {
  auto header = EncodeNpyHeader(tensor.dtype(), tensor.shape());
  if (!header) return std::unexpected(header.error().With(path.string()));
  PARITY_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path, sync));
  PARITY_RETURN_IF_ERROR(file.Write(*header));
  PARITY_RETURN_IF_ERROR(file.Write(tensor.bytes()));
  return file.Commit();
}

}  // namespace parity
