"""The corpus check's speed and memory (issue 52; docs/generation.md "A prompt
corpus"): `parity check STEP.onnx --corpus DIR` (the teacher-forced replay on
ORT with KL, agreement and rank per step) against a plain onnxruntime Python
loop over the same tokens (the peer: one session, PyTorch's tokens fed back,
each past its present, nothing judged), and the Ray engine with 2 actors
against the local engine on the same 2 cores. Prints the ratios; nothing
gates on them (not a timed test).

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
    plain, local, rss, ort_ms = [], [], [], []
    for _ in range(repeats):  # alternated: the machine's load moves
        plain.append(plain_ort_loop(model, corpus_dir))
        w, r, o, _ = parity_check(model, corpus_dir)
        local.append(w), rss.append(r), ort_ms.append(o / 1000)
    p, lo = statistics.median(plain), statistics.median(local)
    print(f"plain onnxruntime Python loop: {p:.2f} s (runs: {', '.join(f'{x:.2f}' for x in plain)})")
    print(f"parity check --corpus (local): {lo:.2f} s whole command, ORT calls {statistics.median(ort_ms):.2f} s, "
          f"peak RSS {max(rss):.0f} MiB (runs: {', '.join(f'{x:.2f}' for x in local)})")
    print(f"ratio parity / plain loop: {lo / p:.2f} (goal: at most 1.5)")
    if os.environ.get("CORPUS_BENCH_RAY", "1") != "0":
        w, _, _, err = parity_check(model, corpus_dir, "--engine", "ray", "--ray-actors", "2")
        mapped = re.search(r"cluster up in ([\d.]+) s; .* in ([\d.]+) s", err)
        up, work = (float(mapped.group(1)), float(mapped.group(2))) if mapped else (float("nan"), float("nan"))
        print(f"parity check --corpus --engine ray (2 actors, 1 CPU each): {w:.2f} s whole command "
              f"(cluster up {up:.2f} s, prompts {work:.2f} s)")
        print(f"ratio ray / local at 2 cores: {w / lo:.2f} whole command, {work / lo:.2f} without the cluster's "
              "start (goal: at most 1.0)")
        running_cluster(model, corpus_dir, lo)


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
