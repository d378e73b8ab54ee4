"""Paths and the tolerance the peer benchmark shares among its modules."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "run_peers.py")  # the entry point; child processes run it again

ATOL, RTOL = 1e-4, 1e-3  # the fixed band given to the peers (numpy allclose / polygraphy elemwise)
DEFAULT_MODELS = "resnet50,mobilenet_v3_small,bert_base,gpt2_small,yolo_like"
