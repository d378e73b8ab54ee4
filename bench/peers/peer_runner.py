"""Running and measuring a child process: wall time and peak RSS from GNU time, one row per run."""

import json
import os
import re
import shlex
import subprocess
import sys
import time

from peer_common import REPO

# --------------------------------------------------------------------------------------------
# running and measuring a child process


def measure(cmd, log, env=None, timeout=1200):
    """(rc, wall_s, peak_rss_bytes) of one child process; stdout+stderr into log; rc 124 on timeout.

    GNU time forks the tool from its own small process, so the peak RSS is the tool's alone (a child
    forked from this Python process would count this process's pages until its exec)."""
    tf = log + ".time"
    full = ["/usr/bin/time", "-f", "%e %M", "-o", tf, "nice", "-n", "5"] + cmd
    t0 = time.perf_counter()
    timed_out = False
    with open(log, "w") as f:
        f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        f.flush()
        p = subprocess.Popen(full, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            for c in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split():
                os.kill(int(c), 9)  # the tool under time (nice has exec'd into it)
            p.wait()
    wall = time.perf_counter() - t0
    rss = 0
    try:
        last = open(tf).read().strip().splitlines()[-1].split()
        wall, rss = float(last[-2]), int(last[-1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    rc = 124 if timed_out else p.returncode
    return rc, wall, rss


def dir_bytes(p):
    if os.path.isfile(p):
        return os.path.getsize(p)
    tot = 0
    for root, _, files in os.walk(p):
        for f in files:
            tot += os.path.getsize(os.path.join(root, f))
    return tot


class Runner:
    def __init__(self, a):
        self.a = a
        self.py = sys.executable
        self.poly = os.path.join(os.path.dirname(self.py), "polygraphy")
        self.rows = []
        self.work = os.path.join(a.cache, "_work")

    def run(self, job, model, tool, cmd, result_file=None, out_path=None, extra=None, timeout=1200):
        os.makedirs(self.work, exist_ok=True)
        log = os.path.join(self.work, f"{model}.{job}.{tool}.log")
        env = dict(os.environ)
        if result_file:
            env["PEERS_RESULT"] = result_file
            if os.path.exists(result_file):
                os.remove(result_file)
        rc, wall, rss = measure(cmd, log, env, timeout)
        row = {"job": job, "model": model, "tool": tool, "rc": rc, "wall_s": round(wall, 2),
               "peak_rss_mb": round(rss / 2**20, 1), "cmd": " ".join(shlex.quote(c) for c in cmd), "log": log}
        if out_path:
            row["bytes_written"] = dir_bytes(out_path) if os.path.exists(out_path) else 0
        if result_file and os.path.exists(result_file):
            row["result"] = json.load(open(result_file))
        if rc == 124:
            row["verdict"] = f"TIMEOUT ({timeout} s)"
        elif extra:
            row.update(extra(row, open(log, errors="replace").read()))
        self.rows.append(row)
        print(f"  {job:9s} {model:18s} {tool:11s} rc={rc} {wall:7.1f}s {rss / 2**20:8.0f} MiB"
              + (f" {row.get('verdict', '')} {row.get('names', '') or ''}"), flush=True)
        return row


def polygraphy_failed(log):
    return re.findall(r"FAILED \| Output: '([^']+)'", log)
