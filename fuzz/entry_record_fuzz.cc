// The Ray engine's framed entry records (src/core/entry_record.h),
// the one parser of the command's entry list and of `parity dataset-worker`'s
// request lines: any line either parses to an index of at most 2^53 and a
// non-empty path without NUL that formats back to the same line, or is
// refused with one line; a path formatted from any bytes parses back exactly.
#include <string>
#include <string_view>

#include "core/entry_record.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto r = ParseEntryRecord(line);
  fuzz::CheckError(r);
  if (r) {
    if (r->index > kMaxEntryIndex || r->path.empty() || r->path.find('\0') != std::string::npos)
      fuzz::Fail("accepted an index or a path it must refuse");
    auto again = ParseEntryRecord(FormatEntryRecord(r->index, r->path));
    if (!again || again->index != r->index || again->path != r->path) fuzz::Fail("a record does not round-trip");
  }
  // The input as a path: formatted, it is one line and reads back exactly.
  if (size > 0 && size <= 4096 && line.find('\0') == std::string_view::npos) {
    const std::string formatted = FormatEntryRecord(size, line);
    if (formatted.find('\n') != std::string::npos || formatted.find('\r') != std::string::npos)
      fuzz::Fail("a formatted record spans lines");
    auto back = ParseEntryRecord(formatted);
    if (!back || back->path != line || back->index != size) fuzz::Fail("a formatted path does not read back");
  }
  return 0;
}
