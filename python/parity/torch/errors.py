"""One-line messages for failures of the model or the exporter."""

import os
import re

_LIMIT = 400
# torch.export names the user's line that raised, below its advice:
#   The following call raised this error:
#     File "/path/models.py", line 156, in forward
#       if y.sum() > 0:
_USER_FRAME = re.compile(r'The following call raised this error:\s*\n\s*File "([^"]+)", line (\d+), in (\S+)\n\s*(.+)')
# torch's graph capture (dynamo) lists the frames it was in, the user's last:
#   from user code:
#      File "/path/models.py", line 124, in _big
#       SEEN.append(t)
_CAPTURE_FRAMES = re.compile(r"from user code:\s*\n((?:[ \t]*\S.*\n?)+)")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.+)')
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class ExportError(RuntimeError):
    """An exporter failed. str() is one line: which exporter, then the
    exporter's own error shortened to its root cause
    ("dynamo export failed: TorchExportError: UserError: Could not guard on
    data-dependent expression ..."). The original exception is __cause__."""

    def __init__(self, exporter, error):
        self.exporter = exporter
        super().__init__(f"{exporter} export failed: {one_line(error)}")


def one_line(error, limit=_LIMIT):
    """'<Type>: <first line>' of an exception; when it was raised from another
    (torch's exporters wrap the real error, sometimes twice), the outer type
    followed by the innermost cause's type and first line."""
    chain = [error]
    while chain[-1].__cause__ is not None and len(chain) < 16:
        chain.append(chain[-1].__cause__)
    root = chain[-1]
    text = f"{type(root).__name__}: {_first_line(root)}"
    if root is not error:
        text = f"{type(error).__name__}: {text}"
    where = _user_frame(chain)
    if where:  # the most useful part: kept whole, the message shortened before it
        where = f" (raised at {where})"
        room = max(limit - len(where), 40)
        return (text if len(text) <= room else text[:room - 3] + "...") + where
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _user_frame(chain):
    """'models.py:156 in forward: if y.sum() > 0:' from the first error of the
    chain that names the user's line, else None."""
    for e in chain:
        m = _USER_FRAME.search(str(e))
        if not m:
            block = _CAPTURE_FRAMES.search(str(e))
            frames = list(_FRAME.finditer(block.group(1))) if block else []
            m = frames[-1] if frames else None
        if m:
            return f"{os.path.basename(m.group(1))}:{m.group(2)} in {m.group(3)}: {m.group(4).strip()}"
    return None


def _first_line(error):
    """The first line that says something; a line that ends in ':' ("Got
    graph break/error:") is joined with the next, which says what."""
    out = ""
    for line in str(error).splitlines():
        line = line.strip()
        if not line or line.startswith("#"):  # torch's messages open with markdown headings
            continue
        out = f"{out} {line}" if out else line
        if not line.endswith(":"):
            break
    return out or "(no message)"


def the_rest(error):
    """Every message of the exception chain, outermost first, each whole
    (what one_line() shortened): for the lines after the summary."""
    chain, parts = [error], []
    while chain[-1].__cause__ is not None and len(chain) < 16:
        chain.append(chain[-1].__cause__)
    for e in chain:
        text = _ANSI.sub("", str(e)).strip()
        if text and not any(text in earlier for earlier in parts):  # outer errors often quote inner ones
            parts.append(f"{type(e).__name__}: {text}")
    return "\n".join(parts)
