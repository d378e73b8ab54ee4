#include "core/library_file.h"

#include <elf.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "core/regular_file.h"

namespace parity {
namespace {

bool ReadAt(int fd, void* out, size_t length, int64_t offset) {
  size_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, static_cast<char*>(out) + done, length - done, offset + static_cast<int64_t>(done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Whether [offset, offset + count * size) lies inside `file_size`, without overflow.
bool Inside(uint64_t offset, uint64_t count, uint64_t size, uint64_t file_size) {
  if (count == 0) return true;
  if (size == 0 || count > file_size / size) return false;
  return offset <= file_size && count * size <= file_size - offset;
}

template <typename Ehdr, typename Phdr>
std::string CheckHeaders(int fd, uint64_t file_size) {
  Ehdr eh{};
  if (file_size < sizeof(Ehdr) || !ReadAt(fd, &eh, sizeof(eh), 0)) return "truncated: shorter than an ELF header";
  if (eh.e_type != ET_DYN) return "not a shared library (ELF, but not ET_DYN)";
  if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(Phdr)) return "no program headers";
  if (!Inside(eh.e_phoff, eh.e_phnum, eh.e_phentsize, file_size))
    return "truncated: its program headers lie past the end of the file";
  if (eh.e_shnum != 0 && !Inside(eh.e_shoff, eh.e_shnum, eh.e_shentsize, file_size))
    return fmt::format("truncated: {} bytes, its section headers end at {}", file_size,
                       static_cast<uint64_t>(eh.e_shoff) + uint64_t{eh.e_shnum} * eh.e_shentsize);
  for (int i = 0; i < eh.e_phnum; ++i) {
    Phdr ph{};
    if (!ReadAt(fd, &ph, sizeof(ph), static_cast<int64_t>(eh.e_phoff + uint64_t(i) * sizeof(Phdr))))
      return "cannot read its program headers";
    if (ph.p_type == PT_LOAD && !Inside(ph.p_offset, 1, ph.p_filesz, file_size) && ph.p_filesz != 0)
      return fmt::format("truncated: {} bytes, a segment ends at {}", file_size,
                         static_cast<uint64_t>(ph.p_offset) + ph.p_filesz);
  }
  return "";
}

}  // namespace

Status CheckLibraryFile(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path));
  const uint64_t size = static_cast<uint64_t>(file.size());
  unsigned char ident[EI_NIDENT] = {};
  if (size < EI_NIDENT || !ReadAt(file.fd(), ident, EI_NIDENT, 0) || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    return InvalidArgument(fmt::format("{}: not a shared library (no ELF header)", path.string()));
  std::string why;
  if (ident[EI_CLASS] == ELFCLASS64)
    why = CheckHeaders<Elf64_Ehdr, Elf64_Phdr>(file.fd(), size);
  else if (ident[EI_CLASS] == ELFCLASS32)
    why = CheckHeaders<Elf32_Ehdr, Elf32_Phdr>(file.fd(), size);
  else
    why = "not a shared library (an unknown ELF class)";
  if (!why.empty()) return InvalidArgument(fmt::format("{}: {}", path.string(), why));
  return {};
}

}  // namespace parity
