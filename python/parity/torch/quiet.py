"""Capturing what torch's exporters print.

They print progress, graphs and warnings both from Python and from C++
(the TorchScript exporter writes its IR graph straight to file descriptor 2
when it fails), so redirecting sys.stdout/sys.stderr is not enough: the
file descriptors are redirected too.
"""

import contextlib
import io
import os
import sys
import tempfile
import warnings


class Captured:
    """What was printed while captured (the text is complete after the block)."""

    def __init__(self):
        self.text = ""


@contextlib.contextmanager
def captured_output():
    """Redirects Python's stdout/stderr and file descriptors 1 and 2 into one
    text, and records warnings (every one) after it; yields a Captured whose
    .text holds it all after the block. Not thread-safe (descriptors are
    process-wide)."""
    result = Captured()
    py = io.StringIO()
    caught = []
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = []
        for fd in (1, 2):
            _flush(fd)
            saved.append((fd, os.dup(fd)))
            os.dup2(sink.fileno(), fd)
        try:
            with contextlib.redirect_stdout(py), contextlib.redirect_stderr(py), \
                    warnings.catch_warnings(record=True) as recorded:
                warnings.simplefilter("always")
                caught = recorded
                yield result
        finally:
            for fd, copy in saved:
                _flush(fd)
                os.dup2(copy, fd)
                os.close(copy)
            sink.seek(0)
            native = sink.read().decode("utf-8", "replace")
            shown = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
                            for w in caught)
            result.text = py.getvalue() + native + shown


def _flush(fd):
    stream = sys.__stdout__ if fd == 1 else sys.__stderr__
    try:
        if stream is not None:
            stream.flush()
    except (OSError, ValueError):
        pass
