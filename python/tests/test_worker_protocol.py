"""parity's one worker protocol on the Python side (parity._worker_protocol,
the Ray actors' reader): the same verdicts as the C++ parser on the shared
fixture (tests/fixtures/worker_lines.json, read by WorkerProtocol.* too),
records that carry any path exactly, and an answer read up to its E line,
refusing what is out of step."""

import io
import json
import pathlib

import pytest

from parity import _worker_protocol as wire

FIXTURE = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "worker_lines.json"


def cases():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["lines"]


@pytest.mark.parametrize("case", cases(), ids=lambda c: repr(c["line"])[:40])
def test_every_fixture_line_gets_its_verdict(case):
    line = case["line"].encode("utf-8")
    if case["kind"] == "refused":
        with pytest.raises(wire.ProtocolError) as e:
            wire.parse_line(line)
        assert "\n" not in str(e.value)
        return
    parsed = wire.parse_line(line)
    assert parsed[0] == case["kind"]
    if "index" in case:
        assert parsed[1] == case["index"]
    if "facts" in case:
        assert parsed[1] == [f.encode() for f in case["facts"]]
    if "id" in case:
        assert (parsed[2], parsed[3]) == (case["id"].encode(), case["why"].encode())


def test_the_fixture_covers_every_kind():
    assert {c["kind"] for c in cases()} == {"ready", "failed", "row", "done", "refused"}


def test_a_control_line_past_the_bound_is_refused_and_a_long_row_is_a_row():
    with pytest.raises(wire.ProtocolError, match="longer than"):
        wire.parse_line(b"E\t1" + b" " * wire.MAX_LINE)
    assert wire.parse_line(b"R\t" + b"1" * (2 * wire.MAX_LINE)) == ("row",)


def test_records_carry_any_path_exactly():
    for path in (b"/d/a\nb.npz", b"/d/c\rd.npz", b"/d/e\xff.npz", b"/d/tab\t.npz"):
        line = wire.format_record(7, path).encode("ascii")
        assert b"\n" not in line
        assert wire.parse_record(line) == (7, path)
    for bad in (b"0\t/etc/passwd", b'{"index": 0, "path_hex": "2f00"}', b'{"index": true, "path_hex": "2f"}'):
        with pytest.raises(wire.ProtocolError):
            wire.parse_record(bad)


def test_an_answer_is_read_up_to_its_end_line():
    out = io.BytesIO(b"O\t2\nR\t0\ta\nB\t0\ts1\tunreadable\nE\t0\n{\"index\": 1}\nE\t1\n")
    assert wire.read_ready(out) == [b"2"]
    assert wire.read_answer(out, 0) == [b"R\t0\ta", b"B\t0\ts1\tunreadable"]
    assert wire.read_answer(out, 1) == [b'{"index": 1}']
    with pytest.raises(wire.WorkerGone):
        wire.read_answer(out, 2)


@pytest.mark.parametrize("stream", [b"E\t5\n", b"B\t5\tjob\tx\nE\t0\n", b"O\t1\n", b"E\tx\n", b"\n"])
def test_an_answer_out_of_step_is_refused(stream):
    with pytest.raises(wire.ProtocolError):
        wire.read_answer(io.BytesIO(stream), 0)


def test_a_worker_that_does_not_say_it_is_ready_is_refused():
    with pytest.raises(wire.ProtocolError):
        wire.read_ready(io.BytesIO(b"E\t0\n"))
    with pytest.raises(wire.WorkerGone):
        wire.read_ready(io.BytesIO(b""))
