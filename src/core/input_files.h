// The files a command reads are never among the files it writes
// (docs/security.md, promise 2): `run -o DIR` must not replace the user's own
// `DIR/x.npy` that it read as an input, nor `check m.onnx --json m.onnx` the
// model. Files are compared by device and inode, so a symlink or a hard link
// to an input is caught too.
//
// While an InputTracking object lives (the `parity` binary holds one for the
// whole command), every file opened through RegularFile::Open is recorded as
// an input, and AtomicFile::Create (through which every output is written)
// refuses a target that is one of them. Outside such a scope (the Python
// extension, a library user) nothing is recorded and nothing is refused.
//
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <sys/stat.h>

#include <filesystem>

#include "core/status.h"

namespace parity {

// Enables recording for its lifetime; nested scopes share one record, which
// is cleared when the outermost ends.
class InputTracking {
 public:
  InputTracking();
  ~InputTracking();
  InputTracking(const InputTracking&) = delete;
  InputTracking& operator=(const InputTracking&) = delete;
};

// Records the file `st` describes (from fstat of an open descriptor) as an
// input read from `path`. Does nothing outside an InputTracking scope.
void NoteInputFile(const struct stat& st, const std::filesystem::path& path);

// Records the file now at `path` as written by this command (AtomicFile::
// Commit calls it): a file the command wrote itself and reads back later (a
// temp model locate asks ORT for, then reloads) is not one of its inputs.
void NoteOutputFile(const std::filesystem::path& path);

// kInvalidArgument naming `target` and the input when `target` (following
// symlinks, and the link itself) is a file recorded as an input; OK when it
// does not exist, is another file, or no scope is active.
Status CheckNotAnInput(const std::filesystem::path& target);

}  // namespace parity
