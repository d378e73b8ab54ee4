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
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = ROOT / "src" / "cli"

SPAWNS = re.compile(r"#\s*include\s*<(?:spawn|sys/wait)\.h>"
                    r"|\b(?:v?fork|posix_spawnp?|waitpid|wait4|ChildProcess)\b|\bsystem\s*\(|\bpopen\s*\(")
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
