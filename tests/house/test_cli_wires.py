"""The command line only parses and wires (issue 55, "the layout shows it").

Processes are the engine's: the Ray driver and its workers' loops
(engine/ray/), the PyTorch corpus recorder (engine/generate/corpus_recorder.h),
child runners (engine/runner/). So no file under src/cli/ starts or waits for
a process: no fork, posix_spawn, waitpid, system, popen, ChildProcess,
<spawn.h> or <sys/wait.h>. Handing the process over with exec (`parity view`
becomes Python's Model Explorer) starts nothing and is wiring; so is the
interrupt handler's KillPendingChildren (cli/signals.cc), which ends the
children the engine started. A failure names the
file and line.

Engine decisions are the engine's too: a command parses its options, calls
one engine entry (engine/commands/ when it picks among several engines:
locate, check --corpus, demo) and hands the result to a writer. Measured
as the engine headers each file under src/cli/ includes: at most
MAX_ENGINE_INCLUDES (the entry and, say, the check of an output the command
makes before it runs), none of them an engine folder's *_internal.h. The
files still above it are listed in ENGINE_INCLUDE_RATCHET with their count,
which may only go down (the test fails on a stale entry as well).
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = ROOT / "src" / "cli"

SPAWNS = re.compile(r"#\s*include\s*<(?:spawn|sys/wait)\.h>"
                    r"|\b(?:v?fork|posix_spawnp?|waitpid|wait4|ChildProcess)\b|\bsystem\s*\(|\bpopen\s*\(")
ENGINE_INCLUDE = re.compile(r'^\s*#\s*include\s*"(engine/[^"]+)"')
MAX_ENGINE_INCLUDES = 2
# Files over the limit today (issue 55) and their count: lower it as they shrink.
ENGINE_INCLUDE_RATCHET = {
    "src/cli/cmd_run.cc": 5,      # samples, run_samples, tensor_source, input_check, environment
    "src/cli/cmd_inspect.cc": 3,  # model_summary, environment, runtime_probe
}
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def code(line):
    """The line without its comment and string literals (an include's path kept)."""
    if line.lstrip().startswith("#"):
        return line
    return STRING.sub('""', line).split("//")[0]


def spawning_lines(paths):
    found = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if SPAWNS.search(code(line)):
                found.append(f"{path.relative_to(ROOT).as_posix()}:{n}: {line.strip()}")
    return found


def test_the_cli_starts_no_process():
    files = sorted(p for p in CLI.iterdir() if p.suffix in (".cc", ".h"))
    assert len(files) > 20, f"found {len(files)} files under src/cli"
    found = spawning_lines(files)
    assert not found, "processes started or awaited in src/cli (the engine's job: engine/ray/, engine/runner/):\n" + \
        "\n".join(found)


def test_the_spawn_pattern_sees_spawns_and_only_spawns():
    for line in ("#include <spawn.h>", "#include <sys/wait.h>",
                 "  const pid_t pid = fork();", "posix_spawnp(&pid, argv[0], &a, nullptr, argv, envp);",
                 "while (waitpid(pid, &status, 0) < 0) {", "auto child = ChildProcess::Start(argv);",
                 "std::system(cmd.c_str());"):
        assert SPAWNS.search(code(line)), line
    for line in ('execvpe(argv[0], argv.data(), environ);', "// a child process (core/child_process.h) ends",
                 '#include "core/child_process.h"', "  KillPendingChildren();",
                 'fmt::print("fork the repository");', "ExitCode() = RunWorker(*o);", "int forks = 0;"):
        assert not SPAWNS.search(code(line)), line


def engine_includes(path):
    found = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = ENGINE_INCLUDE.match(line)
        if m:
            found.append(m.group(1))
    return found


def test_each_cli_file_includes_few_engine_headers_and_no_internal_one():
    files = sorted(p for p in CLI.iterdir() if p.suffix in (".cc", ".h"))
    over, internal, stale = [], [], []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        headers = engine_includes(path)
        internal += [f"{rel}: {h}" for h in headers if h.endswith("_internal.h")]
        allowed = ENGINE_INCLUDE_RATCHET.get(rel, MAX_ENGINE_INCLUDES)
        if len(headers) > allowed:
            over.append(f"{rel}: {len(headers)} engine headers (at most {allowed}): {', '.join(headers)}")
        if rel in ENGINE_INCLUDE_RATCHET and len(headers) < allowed:
            stale.append(f"{rel}: {len(headers)} engine headers now, the ratchet says {allowed}: lower it")
    for rel in ENGINE_INCLUDE_RATCHET:
        if not (ROOT / rel).exists():
            stale.append(f"{rel}: in the ratchet but gone")
    assert not internal, "src/cli includes an engine folder's internal header:\n" + "\n".join(internal)
    assert not over, ("engine decisions in src/cli (one engine entry per command, engine/commands/ when it picks "
                      "among engines):\n" + "\n".join(over))
    assert not stale, "\n".join(stale)


def test_the_engine_include_pattern_sees_engine_includes_only():
    assert ENGINE_INCLUDE.match('#include "engine/commands/locate_command.h"')
    assert ENGINE_INCLUDE.match('  #  include "engine/check/check_internal.h"')
    for line in ('#include "report/locate_report.h"', '#include "cli/output.h"',
                 '// #include "engine/locate/locate.h"', '#include <engine/x.h>'):
        assert not ENGINE_INCLUDE.match(line), line
