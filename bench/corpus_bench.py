"""The corpus check's speed and memory (issue 52; docs/generation.md "A prompt
corpus"): `parity check STEP.onnx --corpus DIR` (the teacher-forced replay on
ORT with KL, agreement and rank per step) against a plain onnxruntime Python
loop over the same tokens (the peer: one session, PyTorch's tokens fed back,
each past its present, nothing judged), and the Ray engine with 2 actors of 1
CPU each against the local engine on the same 2 cores (its ORT default: 2
intra-op threads; also shown at --threads 1). Each repeat runs them all in
turn (the machine's load moves; its load average is printed); the Ray run's
time is split as its driver says: the cluster's start, then the prompts (the
actors' start and model load, their busy time, the rest Ray's scheduling and
transfers). Prints the ratios; nothing gates on them (not a timed test).

    PYTHONPATH=python:python/tests .venv/bin/python bench/corpus_bench.py OUT [PROMPTS [STEPS [REPEATS]]]

OUT is made by corpus_build (the 2-layer Llama step, PROMPTS prompts of 3 to 12
tokens, STEPS steps each; default 1000 x 32) unless it already holds it.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PARITY = os.environ.get("PARITY_BINARY", os.path.join(HERE, "..", "build", "parity"))


def plain_ort_loop(model, corpus_dir):
    """Seconds of a plain onnxruntime loop over the corpus's tokens: session creation included."""
    import onnxruntime as ort
    m = json.load(open(os.path.join(corpus_dir, "corpus.json")))
    arr = {n: np.load(os.path.join(corpus_dir, f)) for n, f in m["files"].items()}
    start = time.perf_counter()
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    kv = [(k["present"], k["past"]) for k in m["kv_map"]]
    empty = {i["name"]: np.zeros(i["shape"], np.float32) for i in m["inputs"] if i["shape"] is not None}
    off, ids, tokens = arr["prompt_offsets"], arr["prompt_ids"], arr["tokens"]
    for p in range(m["prompts"]):
        prompt = ids[off[p]:off[p + 1]].reshape(1, -1)
        n = prompt.shape[1]
        feeds = {m["token_input"]: prompt, m["mask_input"]: np.ones((1, n), np.int64),
                 m["positions_input"]: np.arange(n, dtype=np.int64).reshape(1, n), **empty}
        for s in range(m["steps"]):
            out = dict(zip(names, sess.run(None, feeds)))
            total = feeds[m["mask_input"]].shape[1]
            feeds = {m["token_input"]: tokens[p, s].reshape(1, 1), m["mask_input"]: np.ones((1, total + 1), np.int64),
                     m["positions_input"]: feeds[m["positions_input"]][:, -1:] + 1,
                     **{past: out[present] for present, past in kv}}
    return time.perf_counter() - start


def parity_check(model, corpus_dir, *extra):
    """(wall seconds, peak RSS in MiB, ORT's ms, stderr) of `parity check --corpus`."""
    out = os.path.join(os.path.dirname(corpus_dir), "bench.json")
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "RSS %M", PARITY, "check", model, "--corpus", corpus_dir, "--json", out,
                        *extra], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if r.returncode not in (0, 1):
        raise SystemExit(r.stdout + r.stderr)
    rss = int(re.search(r"RSS (\d+)", r.stderr).group(1)) / 1024
    return wall, rss, json.load(open(out))["corpus"]["ort_ms"], r.stderr


def main(argv):
    out = argv[0]
    prompts = int(argv[1]) if len(argv) > 1 else 1000
    steps = int(argv[2]) if len(argv) > 2 else 32
    repeats = int(argv[3]) if len(argv) > 3 else 3
    corpus_dir = os.path.join(out, "corpus")
    if not os.path.exists(os.path.join(corpus_dir, "corpus.json")):
        import corpus_build
        corpus_build.main([out, str(prompts), str(steps)])
    model = os.path.join(out, "step.onnx")
    m = json.load(open(os.path.join(corpus_dir, "corpus.json")))
    print(f"corpus: {m['prompts']} prompts x {m['steps']} steps, top-{m['top_k']} of {m['vocab']} "
          f"({m['top_k'] * 8 + 16} bytes a step, {(m['top_k'] * 8 + 16) * m['prompts'] * m['steps'] / 2**20:.1f} MiB)")
    ray = os.environ.get("CORPUS_BENCH_RAY", "1") != "0"
    runs = [one_round(model, corpus_dir, ray) for _ in range(repeats)]  # alternated: the machine's load moves
    report(runs, ray)
    if ray:
        running_cluster(model, corpus_dir, statistics.median(r["local"] for r in runs))


def one_round(model, corpus_dir, ray):
    """One alternation: the plain loop, the local engine, the local engine at one
    intra-op thread, the Ray engine (2 actors, 1 CPU each); the load average before."""
    r = {"load": os.getloadavg()[0], "plain": plain_ort_loop(model, corpus_dir)}
    r["local"], r["rss"], ort_ms, _ = parity_check(model, corpus_dir)
    r["ort"] = ort_ms / 1000
    r["local1"] = parity_check(model, corpus_dir, "--threads", "1")[0]
    if ray:
        r["ray"], _, _, err = parity_check(model, corpus_dir, "--engine", "ray", "--ray-actors", "2")
        up = re.search(r"cluster up in ([\d.]+) s; .* in ([\d.]+) s", err)
        busy = re.search(r"actors ready after ([\d.]+) s .* busy ([\d.]+) s", err)
        r["up"], r["prompts"] = (float(up.group(1)), float(up.group(2))) if up else (float("nan"),) * 2
        r["ready"], r["busy"] = (float(busy.group(1)), float(busy.group(2))) if busy else (float("nan"),) * 2
    print("  run: " + ", ".join(f"{k} {v:.2f}" for k, v in r.items()), flush=True)
    return r


def report(runs, ray):
    def med(key):
        return statistics.median(r[key] for r in runs)

    def each(key):
        return ", ".join(f"{r[key]:.2f}" for r in runs)

    p, lo = med("plain"), med("local")
    print(f"load average (1 min) before each run: {each('load')}")
    print(f"plain onnxruntime Python loop: {p:.2f} s (runs: {each('plain')})")
    print(f"parity check --corpus (local): {lo:.2f} s whole command, ORT calls {med('ort'):.2f} s, "
          f"peak RSS {max(r['rss'] for r in runs):.0f} MiB (runs: {each('local')}); "
          f"at --threads 1: {med('local1'):.2f} s (runs: {each('local1')})")
    print(f"ratio parity / plain loop: {lo / p:.2f} (goal: at most 1.5)")
    if not ray:
        return
    print(f"parity check --corpus --engine ray (2 actors, 1 CPU each): {med('ray'):.2f} s whole command "
          f"(runs: {each('ray')}); cluster up {med('up'):.2f} s, prompts {med('prompts'):.2f} s "
          f"(runs: {each('prompts')}): actors ready after {med('ready'):.2f} s, then each busy {med('busy'):.2f} s")
    ratios = [r["prompts"] / r["local"] for r in runs]
    whole = ", ".join(f"{r['ray'] / r['local']:.2f}" for r in runs)
    print(f"ratio ray / local at 2 cores, each run against the local run beside it: prompts "
          f"{', '.join(f'{x:.2f}' for x in ratios)} (median {statistics.median(ratios):.2f}; goal: at most 1.0); "
          f"whole command {whole}")


def running_cluster(model, corpus_dir, local_s):
    """The Ray engine joining a cluster that is already up (`ray start --head`, as a team's
    shared cluster is): the whole command against the local engine, the cluster's start not
    counted because the command does not pay it."""
    import tempfile
    ray = os.path.join(os.path.dirname(sys.executable), "ray")
    temp = tempfile.mkdtemp(prefix="corpus_bench_ray_")
    env = dict(os.environ, HOME=temp)  # Ray 2.60 writes its auth token under HOME
    port = "6391"
    up = subprocess.run([ray, "start", "--head", "--num-cpus", "2", "--include-dashboard=false",
                         "--node-ip-address", "127.0.0.1", "--port", port, "--temp-dir", temp, "--disable-usage-stats"],
                        env=env, capture_output=True, text=True)
    if up.returncode != 0:
        print(f"ray start failed, running-cluster ratio not measured: {up.stderr.strip()[-300:]}")
        return
    home = os.environ.get("HOME", "")
    try:
        os.environ["HOME"] = temp  # the driver reads the cluster's token there
        runs = [parity_check(model, corpus_dir, "--engine", "ray", "--ray-actors", "2",
                             "--ray-address", f"127.0.0.1:{port}")[0] for _ in range(2)]
    finally:
        os.environ["HOME"] = home
        subprocess.run([ray, "stop", "--force"], env=env, capture_output=True)
    w = statistics.median(runs)
    print(f"parity check --corpus --engine ray --ray-address (a running cluster, 2 actors): {w:.2f} s whole "
          f"command (runs: {', '.join(f'{x:.2f}' for x in runs)}); ratio ray / local: {w / local_s:.2f} "
          "(goal: at most 1.0)")


if __name__ == "__main__":
    main(sys.argv[1:])
