"""One process spawner and one worker protocol (issue 55 item 4).

- Processes: every process parity starts, or hands itself over to, goes
  through src/core/child_process.{h,cc} (ChildProcess, RunInForeground,
  ExecInPlace): no other file under src/ forks, execs, spawns, popens,
  calls system() or reaps a child. Tests and their helpers (*_test.cc,
  *_test_util.h) start what they test as they like.
- Worker lines: the control lines of the one worker protocol (O, B, E and a
  tab) are written and parsed only in src/core/worker_protocol.cc and, for
  the Ray actors, python/parity/_worker_protocol.py; no other file of
  src/ or python/parity/ spells one out (a second parser or formatter
  would drift from the fuzzed one). Their verdicts are held equal by
  tests/fixtures/worker_lines.json (WorkerProtocol.*, test_worker_protocol.py).
A failure names each file and line.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]

SPAWNER = {"src/core/child_process.cc"}
SPAWN = re.compile(r"\b(?:v?fork|exec[lv]p?e?|posix_spawnp?|popen|system|waitpid|waitid|wait4|clone3?)\s*\(")
PROTOCOL = {"src/core/worker_protocol.cc", "python/parity/_worker_protocol.py"}
# "E\t", b'O\t', "B\t{}..." as a literal in C++ or Python source.
CONTROL_LINE = re.compile(r"""(?:\bb)?(["'])[OBE]\\t""")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def code(line):
    """The line without its // comment and string literals."""
    return STRING.sub('""', line).split("//")[0]


def is_test(rel):
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(("_test.cc", "_test_util.h", "_test_util.cc")) or "/testing/" in rel


def files(top, *suffixes):
    for path in sorted((ROOT / top).rglob("*")):
        if path.is_file() and path.suffix in suffixes:
            yield path, path.relative_to(ROOT).as_posix()


def matches(paths, allowed, pattern, text):
    """Each line of `paths` (but the files `allowed` and tests) in whose
    `text(path, line)` `pattern` is found, as "FILE:LINE: line"."""
    found = []
    for path, rel in paths:
        if rel in allowed or is_test(rel):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if pattern.search(text(path, line)):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


def spawns(paths):
    return matches(paths, SPAWNER, SPAWN, lambda path, line: code(line))


def control_lines(paths):
    # The literals are what is looked for: only the comment is cut.
    return matches(paths, PROTOCOL, CONTROL_LINE,
                   lambda path, line: line.split("#")[0] if path.suffix == ".py" else line.split("//")[0])


def test_only_the_spawner_starts_processes():
    found = spawns(files("src", ".cc", ".h"))
    assert not found, ("a process started or reaped outside src/core/child_process.cc (use ChildProcess, "
                       "RunInForeground or ExecInPlace):\n" + "\n".join(found))


def test_the_spawner_is_where_the_house_says():
    text = (ROOT / "src/core/child_process.cc").read_text(encoding="utf-8")
    assert SPAWN.search(text), "the spawner's file no longer forks: update SPAWNER"


def test_the_spawn_pattern_sees_spawns_and_only_spawns():
    for line in ("  const pid_t pid = ::fork();", "execvpe(argv[0], argv.data(), environ);", "::execv(a, b);",
                 "posix_spawnp(&pid, argv[0], &a, nullptr, argv, envp);", "while (waitpid(pid, &s, 0) < 0) {",
                 "std::system(cmd.c_str());", "FILE* p = popen(cmd, \"r\");"):
        assert SPAWN.search(code(line)), line
    for line in ("// fork(2) is the spawner's", 'fmt::print("fork() the repository");', "int forks = 0;",
                 "ExecInPlace(args, options);", "auto c = ChildProcess::Start(argv);", "KillPendingChildren();"):
        assert not SPAWN.search(code(line)), line


def test_only_the_protocol_spells_out_its_control_lines():
    found = control_lines(list(files("src", ".cc", ".h")) + list(files("python/parity", ".py")))
    assert not found, ("a worker protocol line written or parsed outside src/core/worker_protocol.cc and "
                       "python/parity/_worker_protocol.py:\n" + "\n".join(found))


def test_the_control_line_pattern_sees_them():
    for line in ('out << "E\\t" << index;', 'if line.startswith(b"E\\t"):', "x == b'O\\t'",
                 'fmt::format("B\\t{}\\t{}", i, m)'):
        assert CONTROL_LINE.search(line), line
    for line in ('fmt::format("R\\t{}", e)', 'sep = "\\t"', 'name = "OBE"'):
        assert not CONTROL_LINE.search(line), line
