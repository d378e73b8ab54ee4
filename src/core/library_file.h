// Checks a shared library parity is about to dlopen (an ONNX Runtime, a
// plugin EP library) without trusting the file: dlopen blocks forever on a
// FIFO and maps a truncated file (an interrupted copy) whose pages past the
// end then fault with SIGBUS inside the loader, before any message.
#pragma once

#include <filesystem>

#include "core/status.h"

namespace parity {

// Opens `path` as a regular file (core/regular_file.h: a FIFO, a device or a
// folder is refused at once) and checks its ELF header: the magic, a 64- or
// 32-bit class, and that the program headers, every PT_LOAD segment's file
// bytes and the section headers lie inside the file's size. kNotFound when
// it does not exist; kInvalidArgument, one line naming the path and what is
// wrong, otherwise. A file that passes may still fail to load (dlopen then
// says why); one swapped after the check is not seen (the window needs write
// access to the library's folder).
Status CheckLibraryFile(const std::filesystem::path& path);

}  // namespace parity
