"""The Ray engine of ``parity check --dataset --engine ray`` (docs/dataset.md).

``python -m parity._ray_engine --entries FILE --out FILE --actors N
[--address ADDR] [--cpus-per-actor C] -- WORKER...`` is what the C++ command
line runs: FILE lists the dataset's entries, one JSON record a line
(``{"index": N, "path_hex": "..."}``: the path's bytes in hex, so that no file
name can split a line); they are mapped in
chunks over a pool of N Ray actors (plain actors: Ray Data's executor, its
imports and its actor start cost seconds on a small machine, docs/generation.md
"A prompt corpus"). Each actor starts WORKER (``parity dataset-worker MODEL ...``
or ``parity corpus-worker ...``) once, in the actor, with its ORT sessions'
intra-op threads set to the CPUs Ray gave the actor, and sends it the chunk's
records unchanged; the worker answers with the rows, computed by the local
engine's own C++ code. Records and answers are parity's one worker protocol
(src/core/worker_protocol.h), read here by parity._worker_protocol. Two
chunks are in flight per actor, sized to what is left (guided: large first,
small at the end so that the actors finish together). The rows are written
to --out in entry order, so the report the command line builds from them is
the local engine's, bit for bit.

Without --address a local cluster is started (and stopped) with its session
files under --temp-dir (removed on exit and on SIGINT/SIGTERM: an interrupted
run writes no rows and leaves no folder of ours); with one, the driver joins
it: every node then needs the same paths (the dataset, the models, the parity
binary) -- a shared file system or the same image.

An actor that dies is restarted by Ray (max_restarts=-1) and the driver sends
its chunk again (a chunk that took its actor down ``_MAX_TRIES`` times fails
the run, exit 3), so the entries run more than once are known and written to
OUT.retried ("ENTRIES<TAB>SAMPLES") for the report. A ``parity dataset-worker``
that dies takes its actor down with it (os._exit), so it is retried the same way.
Test-only knob: PARITY_TEST_RAY_ACTOR_DIES=FILE makes the first actor to
start a chunk while FILE does not exist create FILE and die (os._exit), once
per FILE (python/tests/test_dataset_ray.py).

A local cluster is advertised on 127.0.0.1, its state and its authentication
token in --temp-dir (the command's own folder, mode 0700, HOME for the
driver and the cluster); nothing is written under ~/.ray.

Exit codes: 0 done, 2 bad input (Ray missing, an unreadable or malformed entries file),
3 a failure of Ray or of a worker, 130/143 interrupted.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple


from parity import _worker_protocol as wire

_DIE_KNOB = "PARITY_TEST_RAY_ACTOR_DIES"  # test only: see the module's docstring


_DEPTH = 2  # chunks in flight per actor
_MAX_TRIES = 3  # sends of one chunk whose actor died each time, before the run fails


class _Worker:
    """One actor: its own worker process (``parity dataset-worker`` with its two
    sessions, or ``parity corpus-worker`` with its one)."""

    def __init__(self, worker: List[str], cpus: int, die_once: Optional[str]):
        self._die_once = die_once
        start = time.time()
        # Bytes, not text: a row names its sample by the file's name, which
        # may be any bytes (not UTF-8); they reach the rows file unchanged.
        self._proc = subprocess.Popen([*worker, "--threads", str(cpus)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, bufsize=0)
        try:
            wire.read_ready(self._proc.stdout)
        except (wire.WorkerGone, wire.ProtocolError) as e:
            why = f": {e}" if str(e) else ""
            raise RuntimeError(f"parity {worker[1] if len(worker) > 1 else 'worker'} did not start "
                               f"(exit {self._proc.poll()}){why}") from None
        self._ready, self._load = time.time(), time.time() - start  # when, and its model load's seconds

    def run(self, chunk: List[Dict[str, object]]) -> Tuple[List[Tuple[int, bytes]], Tuple[float, float, float]]:
        """Each entry's index and its rows (the worker's lines, joined by newlines),
        and (when the worker was ready, its load's seconds, this chunk's seconds)."""
        start = time.perf_counter()
        if self._die_once:
            try:
                os.close(os.open(self._die_once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                os._exit(1)  # the actor dies mid-chunk, once: Ray restarts it and the driver sends the chunk again
            except FileExistsError:
                pass
        out = []
        for item in chunk:
            record = item["record"]
            self._proc.stdin.write(f"{record}\n".encode("ascii"))  # the command's own record, forwarded unchanged
            self._proc.stdin.flush()
            try:
                rows = wire.read_answer(self._proc.stdout, item["index"])
            except (wire.WorkerGone, wire.ProtocolError) as e:  # the actor goes too: the driver sends the chunk again
                how = "died" if isinstance(e, wire.WorkerGone) else f"broke the protocol ({e})"
                print(f"parity: ray: the parity worker {how} on entry {item['index']} ({_shown(record)})",
                      file=sys.stderr, flush=True)
                os._exit(1)
            out.append((item["index"], b"\n".join(rows)))
        return out, (self._ready, self._load, time.perf_counter() - start)


def _parse(argv: List[str]) -> argparse.Namespace:
    if "--" not in argv:
        raise SystemExit("parity._ray_engine: the worker command follows '--'")
    cut = argv.index("--")
    p = argparse.ArgumentParser(prog="python -m parity._ray_engine")
    p.add_argument("--entries", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--actors", type=int, default=2)
    p.add_argument("--address", default=None)
    p.add_argument("--temp-dir", default=None)
    p.add_argument("--cpus-per-actor", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=0)
    p.add_argument("--progress", action="store_true", help="a line on stderr as entries come back (every 5%%)")
    args = p.parse_args(argv[:cut])
    args.worker = argv[cut + 1:]
    return args


class BadEntries(ValueError):
    """The entries file is not a list of records (exit 2, one line)."""


def _shown(record: str) -> str:
    """A record's path for a message: its bytes decoded, controls escaped."""
    try:
        raw = wire.parse_record(record.encode("ascii"))[1]
    except (wire.ProtocolError, UnicodeEncodeError):
        return "?"
    return repr(os.fsdecode(raw))[1:-1]


def _record(line: bytes, number: int) -> Dict[str, object]:
    try:
        index = wire.parse_record(line)[0]
    except wire.ProtocolError as e:
        raise BadEntries(f"entries line {number}: {e}") from None
    return {"index": index, "record": line.decode("ascii")}


def _entries(path: str) -> List[Dict[str, object]]:
    """The entry list: framed records with unique indices (BadEntries otherwise)."""
    items, seen = [], set()
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            if not line.endswith(b"\n"):
                raise BadEntries(f"entries line {number}: not ended by a newline (a truncated list)")
            item = _record(line[:-1], number)
            if item["index"] in seen:
                raise BadEntries(f"entries line {number}: index {item['index']} given twice")
            seen.add(item["index"])
            items.append(item)
    return items


class _Interrupted(Exception):
    pass


def _on_signal(sig, _frame):
    # Once: later signals (a terminal's Ctrl-C reaches us and the command,
    # which forwards it) must not interrupt the clean-up.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Interrupted(sig)


def _chunk_size(left: int, actors: int, most: int) -> int:
    """Guided chunks: a quarter of each actor's share of what is left, at most
    `most` (--batch-size, else 64) entries: few round trips while much is
    left, small chunks at the end so that no actor waits on another's last."""
    return max(1, min(most, -(-left // (4 * actors))))


class _Pool:
    """The driver's side of the actor pool: each actor has _DEPTH chunks in
    flight (it starts the next while its rows travel back); an actor that dies
    fails them all, and each is sent to it again once it restarts; only the
    one it had started counts as run again.

    Ray places the actors, restarts them and carries the chunks; this class
    only decides which chunk goes to which actor next. Not ray.util.ActorPool:
    it keeps one call in flight per actor (each actor would wait for its rows
    to travel back before starting the next chunk) and cannot say which of a
    dead actor's calls had started, which the report's retried entries need;
    nor Ray's own task retries (max_task_retries), for the same reason."""

    def __init__(self, ray, actors, items, most: int):
        self._ray, self._items, self._most, self._actors = ray, items, most, len(actors)
        self._next, self.repeated, self.timing = 0, [], {}
        self._dead, self._ran = set(), set()  # calls of an actor's dead incarnation; those it had started
        self._pending: Dict[object, Tuple[object, list, int]] = {}  # ref -> (actor, chunk, tries)
        self._flight: Dict[object, List[object]] = {a: [] for a in actors}  # actor -> its refs, oldest first
        for actor in actors:
            for _ in range(_DEPTH):
                self._send_next(actor)

    def _send(self, actor, chunk, tries: int = 0) -> None:
        ref = actor.run.remote(chunk)
        self._pending[ref] = (actor, chunk, tries)
        self._flight[actor].append(ref)

    def _send_next(self, actor) -> None:
        if self._next < len(self._items):
            size = _chunk_size(len(self._items) - self._next, self._actors, self._most)
            self._send(actor, self._items[self._next:self._next + size])
            self._next += size

    def _died(self, actor, ref) -> bool:
        """Whether failed `ref` had started (it was its actor's oldest call when
        the death was first seen: an actor runs its calls in order)."""
        if ref not in self._dead:  # the first of this death's failures: every call in flight went with it
            self._ran.add(self._flight[actor][0])
            self._dead.update(self._flight[actor])
        self._flight[actor].remove(ref)
        return ref in self._ran

    def results(self):
        """Yields each chunk's [(index, rows)] as it comes back."""
        while self._pending:
            [ref], _ = self._ray.wait(list(self._pending), num_returns=1)
            actor, chunk, tries = self._pending.pop(ref)
            try:
                rows, (ready, load, busy) = self._ray.get(ref)
            except self._ray.exceptions.RayActorError as e:
                if tries + 1 >= _MAX_TRIES:
                    raise RuntimeError(f"the actor running entries {chunk[0]['index']} to {chunk[-1]['index']} "
                                       f"failed {_MAX_TRIES} times: "
                                       f"{(str(e).strip().splitlines() or [''])[-1][:200]}") from None
                if self._died(actor, ref):
                    self.repeated.extend(i["index"] for i in chunk)
                self._send(actor, chunk, tries + 1)  # to the restarted actor; the chunk waits for it
                continue
            self._flight[actor].remove(ref)
            self.timing.setdefault(actor, [ready, load, 0.0])[2] += busy
            self._send_next(actor)
            yield rows


def _map(ray, args, items):
    """Runs the entries through the actor pool: ({index: lines}, cpus, the entries run again)."""
    total = int(ray.cluster_resources().get("CPU", 1))
    cpus = args.cpus_per_actor or max(1, total // args.actors)
    worker = ray.remote(num_cpus=cpus, max_restarts=-1, max_task_retries=0)(_Worker)
    die_once = os.environ.get(_DIE_KNOB) or None
    begun = time.time()
    pool = _Pool(ray, [worker.remote(args.worker, cpus, die_once) for _ in range(args.actors)], items,
                 args.batch_size or 64)
    by_index, shown = {}, 0
    for rows in pool.results():
        by_index.update(rows)
        if args.progress and (len(by_index) - shown >= max(1, len(items) // 20) or len(by_index) == len(items)):
            shown = len(by_index)
            print(f"parity: ray: {shown}/{len(items)} entries done", file=sys.stderr, flush=True)
    _say_timing(pool.timing.values(), begun)
    return by_index, cpus, sorted(set(pool.repeated))


def _say_timing(actors, begun: float) -> None:
    """One line: how long the actors took to be ready (Ray's actor start and
    the worker's model load) and how busy they were afterwards; the rest of
    the map is Ray's scheduling and transfers and the actors' wait."""
    actors = list(actors)
    if actors:
        ready = max(a[0] for a in actors) - begun
        print(f"parity: ray: actors ready after {ready:.2f} s (their model loads {max(a[1] for a in actors):.2f} s), "
              f"then busy {sum(a[2] for a in actors) / len(actors):.2f} s each on average", file=sys.stderr)


def _local_cluster(temp_dir: Optional[str]) -> Dict[str, object]:
    """ray.init's arguments for a local cluster: its state in the command's
    temp folder, advertised on 127.0.0.1. Ray 2.60 starts a new local cluster
    with token authentication and writes the token to ~/.ray/auth_token; with
    a temp folder, HOME is that folder for the driver and the cluster it
    starts, so the token lives and goes with it (RAY_AUTH_TOKEN_PATH alone did
    not authenticate the driver's own GCS client). Note: gcs_server and raylet
    still listen on every interface (docs/security.md)."""
    kwargs: Dict[str, object] = dict(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False,
                                     _node_ip_address="127.0.0.1")
    if temp_dir:
        folder = os.path.abspath(temp_dir)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        kwargs["_temp_dir"] = folder
        if "RAY_AUTH_MODE" not in os.environ:
            os.environ["HOME"] = folder
    return kwargs


def run(args: argparse.Namespace) -> int:
    try:
        import ray
    except ImportError as e:
        print(f"parity: error: --engine ray needs the ray package (pip install 'ray[data]'): {e}", file=sys.stderr)
        return 2
    try:
        items = _entries(args.entries)
    except (OSError, BadEntries) as e:
        print(f"parity: error: --engine ray: {e}", file=sys.stderr)
        return 2
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _on_signal)
    start = time.perf_counter()
    try:
        try:
            if args.address:
                ray.init(address=args.address, log_to_driver=False)
            else:
                ray.init(**_local_cluster(args.temp_dir))
            started = time.perf_counter()
            by_index, cpus, repeated = _map(ray, args, items)
            mapped = time.perf_counter()
        finally:
            ray.shutdown()
            if args.temp_dir and not args.address:
                shutil.rmtree(args.temp_dir, ignore_errors=True)
    except _Interrupted as e:
        print("parity: ray: interrupted; the cluster is stopped, no rows written", file=sys.stderr)
        return 128 + int(e.args[0])
    except Exception as e:  # Ray's own failure (a cluster that cannot start under a memory limit): one line
        first = (str(e).strip().splitlines() or [""])[0][:300]
        print(f"parity: error: --engine ray: Ray failed: {e.__class__.__name__}: {first}", file=sys.stderr)
        return 3
    print(f"parity: ray: cluster up in {started - start:.2f} s; {len(items)} entries on {args.actors} actors "
          f"({cpus} CPUs each) in {mapped - started:.2f} s", file=sys.stderr)
    missing = [i["index"] for i in items if i["index"] not in by_index]
    if missing:
        print(f"parity: error: the Ray engine lost {len(missing)} entries (first: {missing[0]})", file=sys.stderr)
        return 3
    return _write(args.out, by_index, repeated)


def _write(out: str, by_index: Dict[int, bytes], repeated: List[int]) -> int:
    retried = sum(sum(1 for ln in bytes(by_index.get(i, b"")).split(b"\n") if ln.startswith(b"R\t"))
                  for i in repeated)
    if repeated:
        print(f"parity: ray: an actor died; {len(repeated)} entries ({retried} samples) were run again",
              file=sys.stderr)
    with open(out + ".retried.tmp", "w", encoding="utf-8") as f:
        f.write(f"{len(repeated)}\t{retried}\n")
    os.replace(out + ".retried.tmp", out + ".retried")
    with open(out + ".tmp", "wb") as f:
        for i in sorted(by_index):
            if by_index[i]:
                f.write(bytes(by_index[i]) + b"\n")
    os.replace(out + ".tmp", out)
    return 0


def main(argv: List[str]) -> int:
    return run(_parse(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
