"""parity's one worker protocol (src/core/worker_protocol.h), as the Ray actors
(parity._ray_engine) speak it with ``parity dataset-worker`` and ``parity
corpus-worker``: the same grammar and the same verdicts as the C++ parser,
both held to tests/fixtures/worker_lines.json.

Requests, one a line: a framed entry record, ``{"index":N,"path_hex":"..."}``
(the path's bytes in lowercase hex, so that no file name can split a line).
Replies, one a line, cells separated by tabs:

- ``O<TAB>FACT...``: first, once: the worker is ready;
- ``B<TAB>INDEX<TAB>ID<TAB>WHY``: a failure within entry INDEX (a sample's, or
  the whole request's: ID ``job``);
- any other non-empty line: a row of the entry's result, passed on as it is;
- ``E<TAB>INDEX``: entry INDEX is answered; the lines since the previous E
  (or the ready line) are its.
"""
import json
from typing import BinaryIO, List, Tuple

MAX_INDEX = 1 << 53
MAX_RECORD = 16 * 1024  # kMaxEntryRecordBytes
MAX_LINE = 64 * 1024  # kMaxWorkerLineBytes: a control line is at most this long
_HEX = frozenset("0123456789abcdef")


class ProtocolError(ValueError):
    """A line that is not the protocol's (the message is one line)."""


class WorkerGone(Exception):
    """The worker's stdout ended before the line that was waited for."""


def format_record(index: int, path: bytes) -> str:
    """The request line for entry ``index`` at ``path`` (bytes), without its newline."""
    return f'{{"index":{index},"path_hex":"{path.hex()}"}}'


def parse_record(line: bytes) -> Tuple[int, bytes]:
    """One request line (without its newline): (index, path bytes); ProtocolError otherwise."""
    if len(line) > MAX_RECORD:
        raise ProtocolError(f"longer than {MAX_RECORD} bytes")
    try:
        obj = json.loads(line.decode("ascii"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ProtocolError(f"not a JSON record ({e.__class__.__name__})") from None
    if not isinstance(obj, dict) or set(obj) != {"index", "path_hex"}:
        raise ProtocolError("not an object of exactly index and path_hex")
    index, digits = obj["index"], obj["path_hex"]
    if type(index) is not int or not 0 <= index <= MAX_INDEX:
        raise ProtocolError("the index is not an integer from 0 to 2^53")
    if not isinstance(digits, str) or not digits or len(digits) % 2 or not set(digits) <= _HEX:
        raise ProtocolError("path_hex is not lowercase hex of whole bytes")
    path = bytes.fromhex(digits)
    if b"\0" in path:
        raise ProtocolError("the path holds a NUL byte")
    return index, path


def _index(cell: bytes) -> int:
    if not cell or len(cell) > 16 or not cell.isdigit():
        raise ValueError
    value = int(cell)
    if value > MAX_INDEX:
        raise ValueError
    return value


def _quote(line: bytes) -> str:
    shown = "".join(chr(b) if 0x20 <= b < 0x7f else "?" for b in line[:64])
    return shown + ("..." if len(line) > 64 else "")


def parse_line(line: bytes) -> tuple:
    """One reply line (without its newline): ("ready", [facts]),
    ("failed", index, id, why), ("row",) or ("done", index), the cells as
    bytes; ProtocolError (one line) for a control line (O, B or E followed by
    a tab or nothing) that is not one of these, or an empty line."""
    if not line:
        raise ProtocolError(f"worker line '{_quote(line)}': an empty line")
    kind = line[:1]
    if kind not in (b"O", b"B", b"E") or (len(line) > 1 and line[1:2] != b"\t"):
        return ("row",)
    if len(line) > MAX_LINE:
        raise ProtocolError(f"worker line '{_quote(line)}': longer than {MAX_LINE} bytes")
    cells = line.split(b"\t")
    try:
        if kind == b"O":
            if len(cells) < 2:
                raise ProtocolError(f"worker line '{_quote(line)}': a ready line names at least one fact")
            return ("ready", cells[1:])
        if kind == b"E":
            if len(cells) != 2:
                raise ValueError
            return ("done", _index(cells[1]))
        if len(cells) != 4:
            raise ValueError
        return ("failed", _index(cells[1]), cells[2], cells[3])
    except ValueError:
        what = "an end line is E and an index" if kind == b"E" else "a failure line is B, an index, an id and a message"
        raise ProtocolError(f"worker line '{_quote(line)}': {what} (an index is an integer of at most 2^53)") from None


def _next(stream: BinaryIO) -> bytes:
    line = stream.readline()
    if not line:
        raise WorkerGone()
    return line[:-1] if line.endswith(b"\n") else line


def read_ready(stream: BinaryIO) -> List[bytes]:
    """The facts of the worker's first line, which must say it is ready."""
    parsed = parse_line(_next(stream))
    if parsed[0] != "ready":
        raise ProtocolError(f"the worker's first line is a {parsed[0]} line, not that it is ready")
    return parsed[1]


def read_answer(stream: BinaryIO, index: int) -> List[bytes]:
    """The lines (rows and failures, as they are) answering entry ``index``,
    up to its ``E`` line; WorkerGone when the worker's stdout ends first,
    ProtocolError for a line out of step (another entry's, a second ready)."""
    lines = []
    while True:
        line = _next(stream)
        parsed = parse_line(line)
        if parsed[0] == "done" and parsed[1] == index:
            return lines
        if parsed[0] == "ready" or (parsed[0] in ("done", "failed") and parsed[1] != index):
            raise ProtocolError(f"worker line '{_quote(line)}': not entry {index}'s answer")
        lines.append(line)
