"""A plain Python ONNX Runtime greedy loop doing the steps generate_bench
does (docs/generation.md): the dump's prompt, the presents fed back as the
next pasts, ids / mask / positions made with NumPy, argmax of the last
logits. Prints the median wall time of one whole loop.

    python bench/generate_python.py MODEL.onnx DUMP_DIR [--rounds N]
"""

import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort


def main(argv):
    model, dump = argv[0], argv[1]
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 30
    manifest = json.load(open(os.path.join(dump, "manifest.json")))
    g = manifest["generation"]
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    outs = [o.name for o in sess.get_outputs()]
    prompt = {n: np.load(os.path.join(dump, f)) for n, f in manifest["inputs"].items() if n in names}
    kv = [(p["present"], p["past"]) for p in g["kv_map"]]
    tok, mask, pos, logits = g["token_input"], g["mask_input"], g["positions_input"], g["logits_output"]
    times, tokens = [], []
    for r in range(rounds + 2):
        feed, tokens = dict(prompt), []
        start = time.perf_counter()
        for _ in range(g["length"]):
            result = dict(zip(outs, sess.run(None, feed)))
            nxt = result[logits][:, -1, :].argmax(-1)
            tokens.append(int(nxt[0]))
            feed[tok] = nxt.reshape(-1, 1).astype(feed[tok].dtype)
            if mask:
                feed[mask] = np.concatenate([feed[mask], np.ones((feed[mask].shape[0], 1), feed[mask].dtype)], -1)
            if pos:
                feed[pos] = feed[pos][..., -1:] + 1
            for present, past in kv:
                feed[past] = result[present]
        if r >= 2:
            times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    med = times[len(times) // 2]
    print(f"python ORT loop: {g['length']} steps, median {med:.3f} ms per loop ({med / g['length']:.3f} ms per step), "
          f"{len(times)} rounds; tokens {' '.join(map(str, tokens))}")


if __name__ == "__main__":
    main(sys.argv[1:])
