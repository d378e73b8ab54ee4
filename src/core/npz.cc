#include "core/npz.h"

#include <fmt/format.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/npy.h"
#include "core/regular_file.h"

namespace parity {
namespace {

constexpr std::string_view kSuffix = ".npy";

std::string ZipErrorText(int code) {
  zip_error_t err;
  zip_error_init_with_code(&err, code);
  std::string text = zip_error_strerror(&err);
  zip_error_fini(&err);
  return text;
}

// Reads one entry; the extra-byte probe after the data is what catches a
// stream longer than its declared size (and, at EOF, makes libzip check the
// CRC).
class ZipEntrySource : public ByteSource {
 public:
  explicit ZipEntrySource(zip_file_t* file) : file_(file) {}
  ~ZipEntrySource() override { zip_fclose(file_); }
  Result<size_t> Read(std::span<std::byte> out) override {
    size_t done = 0;
    while (done < out.size()) {
      const zip_int64_t n =
          zip_fread(file_, out.data() + done, std::min<size_t>(out.size() - done, size_t{1} << 26));
      if (n < 0) return Corrupt(fmt::format("cannot decompress: {}", zip_file_strerror(file_)));
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    return done;
  }

 private:
  zip_file_t* file_;
};

Result<Tensor> ReadEntry(zip_t* zip, zip_uint64_t index, const zip_stat_t& st,
                         const NpzReadOptions& options) {
  if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
    return Corrupt("the archive does not declare the entry's size");
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
    return Unsupported("encrypted entries are not supported");
  if (st.size > options.max_entry_bytes)
    return Unsupported(fmt::format("declares {} uncompressed bytes, above the limit of {}", st.size,
                                   options.max_entry_bytes));
  if (st.size > options.ratio_check_above_bytes &&
      static_cast<double>(st.size) > options.max_compression_ratio * static_cast<double>(st.comp_size))
    return Corrupt(fmt::format("declares {} bytes from {} compressed bytes, a ratio above {}:1 (zip bomb?)",
                               st.size, st.comp_size, options.max_compression_ratio));
  // A declared size the compression method cannot produce from the stored
  // bytes is a lie: refuse it before the .npy inside allocates it. Deflate
  // turns each bit into at most 516 bytes (a 258-byte match in a 2-bit code),
  // so about 1032:1 plus block overhead; a stored entry holds its size.
  if (st.valid & ZIP_STAT_COMP_METHOD) {
    if (st.comp_method == ZIP_CM_STORE && st.size != st.comp_size)
      return Corrupt(fmt::format("a stored (uncompressed) entry declares {} bytes but holds {}", st.size,
                                 st.comp_size));
    constexpr uint64_t kMaxDeflateRatio = 1032, kDeflateSlack = 1024;
    if (st.comp_method == ZIP_CM_DEFLATE && st.size / kMaxDeflateRatio > st.comp_size + kDeflateSlack)
      return Corrupt(fmt::format("declares {} bytes from {} compressed bytes, more than deflate can produce",
                                 st.size, st.comp_size));
  }
  zip_file_t* file = zip_fopen_index(zip, index, 0);
  if (file == nullptr) {
    const int code = zip_error_code_zip(zip_get_error(zip));
    std::string msg = fmt::format("cannot open: {}", zip_strerror(zip));
    if (code == ZIP_ER_COMPNOTSUPP || code == ZIP_ER_ENCRNOTSUPP) return Unsupported(std::move(msg));
    return Corrupt(std::move(msg));
  }
  ZipEntrySource src(file);
  PARITY_ASSIGN_OR_RETURN(Tensor t, ReadNpyFrom(src, st.size));
  std::byte probe[1];
  PARITY_ASSIGN_OR_RETURN(size_t extra, src.Read(probe));
  if (extra != 0)
    return Corrupt(
        fmt::format("decompresses to more than its declared {} bytes (corrupt or a zip bomb)", st.size));
  return t;
}

time_t Dos1980() {
  // libzip converts mtime to a DOS date in local time; mktime is its inverse.
  std::tm tm{};
  tm.tm_year = 80;
  tm.tm_mon = 0;
  tm.tm_mday = 1;
  tm.tm_isdst = -1;
  return std::mktime(&tm);
}

// The archive's central directory judged as a whole before any entry is
// inflated (issue 29: 200 directory entries pointing at one ~1000 MiB stream,
// each under the per-entry ratio check, asked for ~200 GB).
Status CheckArchiveBudget(zip_t* zip, zip_int64_t entries, int64_t file_size, const NpzReadOptions& options) {
  uint64_t declared = 0, compressed = 0;
  int64_t counted = 0;
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip, static_cast<zip_uint64_t>(i), 0, &st) != 0) continue;  // named by the read below
    if ((st.valid & ZIP_STAT_NAME) && std::string_view(st.name).ends_with('/')) continue;
    const bool skipped = options.skip_non_npy_entries && (st.valid & ZIP_STAT_NAME) &&
                         !std::string_view(st.name).ends_with(kSuffix);
    if ((st.valid & ZIP_STAT_SIZE) && !skipped) declared += std::min<uint64_t>(st.size, uint64_t{1} << 62);
    if (st.valid & ZIP_STAT_COMP_SIZE) compressed += std::min<uint64_t>(st.comp_size, uint64_t{1} << 62);
    ++counted;
  }
  if (compressed > static_cast<uint64_t>(std::max<int64_t>(file_size, 0)))
    return Corrupt(fmt::format("its {} entries declare {} compressed bytes in all, more than the {} bytes of the "
                               "file: entries share data (several directory entries pointing at one stream)",
                               counted, compressed, file_size));
  if (declared > options.max_total_bytes)
    return Unsupported(fmt::format("its {} entries declare {} uncompressed bytes in all, above the budget of {} "
                                   "bytes for one archive (half this machine's memory, at most 64 GiB)",
                                   counted, declared, options.max_total_bytes));
  return {};
}

}  // namespace

uint64_t DefaultNpzTotalBudget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  constexpr uint64_t kCap = uint64_t{64} << 30;
  if (pages <= 0 || page <= 0) return kCap;
  return std::min(kCap, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2);
}

Result<TensorSet> ReadNpz(const std::filesystem::path& path, const NpzReadOptions& options) {
  const std::string name = path.string();
  // Opened and checked by descriptor: a FIFO or a device is refused, never read.
  PARITY_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path));
  const int64_t file_size = file.size();
  int code = 0;
  std::unique_ptr<zip_t, void (*)(zip_t*)> zip(zip_fdopen(file.fd(), ZIP_RDONLY, &code), &zip_discard);
  if (zip) file.Release();  // libzip owns the descriptor now
  if (!zip) {
    if (code == ZIP_ER_NOENT) return NotFound(fmt::format("{}: no such file", name));
    if (code == ZIP_ER_OPEN || code == ZIP_ER_READ)
      return InvalidArgument(fmt::format("{}: cannot read: {}", name, ZipErrorText(code)));
    return Corrupt(fmt::format("{}: not a readable .npz (zip) archive: {}", name, ZipErrorText(code)));
  }
  TensorSet out;
  const zip_int64_t entries = zip_get_num_entries(zip.get(), 0);
  if (auto s = CheckArchiveBudget(zip.get(), entries, file_size, options); !s)
    return std::unexpected(std::move(s.error()).With(name));
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
      return Corrupt(fmt::format("{}: entry {}: {}", name, i, zip_strerror(zip.get())));
    const std::string entry = st.name;
    if (entry.ends_with('/')) continue;
    if (!entry.ends_with(kSuffix) || entry.size() == kSuffix.size()) {
      if (options.skip_non_npy_entries) continue;
      return InvalidArgument(fmt::format(
          "{}: entry '{}' is not a .npy file (an .npz holds only NAME.npy entries)", name, entry));
    }
    auto tensor = ReadEntry(zip.get(), static_cast<zip_uint64_t>(i), st, options);
    if (!tensor)
      return std::unexpected(std::move(tensor.error()).With(fmt::format("{}: entry '{}'", name, entry)));
    std::string key = entry.substr(0, entry.size() - kSuffix.size());
    if (out.Contains(key)) return Corrupt(fmt::format("{}: tensor '{}' appears twice", name, key));
    out.Set(std::move(key), std::move(*tensor));
  }
  return out;
}

Status WriteNpz(const std::filesystem::path& path, const TensorSet& tensors, const NpzWriteOptions& options) {
  const std::string name = path.string();
  // libzip deletes an archive left without entries; write the 22-byte empty
  // zip (end of central directory record only) that np.savez() writes.
  if (tensors.empty())
    return WriteFileAtomic(path, std::string_view("PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 22));
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (buffer == nullptr)
    return InternalError(fmt::format("{}: zip_source_buffer_create: {}", name, zip_error_strerror(&error)));
  std::unique_ptr<zip_source_t, void (*)(zip_source_t*)> buffer_owner(buffer, &zip_source_free);
  zip_t* zip = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  if (zip == nullptr)
    return InternalError(fmt::format("{}: zip_open_from_source: {}", name, zip_error_strerror(&error)));
  zip_source_keep(buffer);  // the archive holds one reference, buffer_owner the other
  std::unique_ptr<zip_t, void (*)(zip_t*)> zip_owner(zip, &zip_discard);

  // The serialized entries must outlive zip_close, which reads them.
  std::vector<std::vector<std::byte>> images;
  images.reserve(tensors.size());
  const time_t mtime = Dos1980();
  for (const NamedTensor& nt : tensors) {
    if (nt.name.empty()) return InvalidArgument(fmt::format("{}: a tensor has an empty name", name));
    auto image = SerializeNpy(nt.tensor);
    if (!image) return std::unexpected(image.error().With(fmt::format("{}: tensor '{}'", name, nt.name)));
    images.push_back(std::move(*image));
    zip_source_t* src = zip_source_buffer(zip, images.back().data(), images.back().size(), 0);
    const std::string entry = nt.name + std::string(kSuffix);
    zip_int64_t index = src ? zip_file_add(zip, entry.c_str(), src, ZIP_FL_ENC_UTF_8) : -1;
    // libzip refuses a UTF-8 name holding C0 controls (an ESC from a model's
    // tensor name); such a name is stored as its bytes, without the UTF-8 flag.
    if (index < 0 && src && zip_error_code_zip(zip_get_error(zip)) == ZIP_ER_INVAL) {
      zip_error_clear(zip);
      index = zip_file_add(zip, entry.c_str(), src, ZIP_FL_ENC_RAW);
    }
    if (index < 0) {
      if (src) zip_source_free(src);
      return InternalError(fmt::format("{}: cannot add '{}': {}", name, entry, zip_strerror(zip)));
    }
    const bool deflate = options.compression == NpzCompression::kDeflate;
    if (zip_set_file_compression(zip, static_cast<zip_uint64_t>(index),
                                 deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                                 deflate ? static_cast<zip_uint32_t>(options.deflate_level) : 0) != 0 ||
        zip_file_set_mtime(zip, static_cast<zip_uint64_t>(index), mtime, 0) != 0)
      return InternalError(fmt::format("{}: cannot set up '{}': {}", name, entry, zip_strerror(zip)));
  }
  if (zip_close(zip) != 0)
    return InternalError(fmt::format("{}: cannot build the archive: {}", name, zip_strerror(zip)));
  zip_owner.release();

  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_source_stat(buffer, &st) != 0 || zip_source_open(buffer) != 0)
    return InternalError(fmt::format("{}: cannot read back the archive", name));
  std::vector<std::byte> bytes(st.size);
  const zip_int64_t n = zip_source_read(buffer, bytes.data(), bytes.size());
  zip_source_close(buffer);
  if (n < 0 || static_cast<zip_uint64_t>(n) != st.size)
    return InternalError(fmt::format("{}: cannot read back the archive", name));
  return WriteFileAtomic(path, bytes);
}

}  // namespace parity
