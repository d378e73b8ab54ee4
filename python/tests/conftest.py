import inspect
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

torch.set_num_threads(1)
warnings.filterwarnings("ignore", category=UserWarning)  # torch.onnx export chatter

# torch.onnx.export(dynamo=...) exists: the dynamo exporter parity.torch drives (torch >= 2.5)
HAS_DYNAMO = "dynamo" in inspect.signature(torch.onnx.export).parameters
EXPORTER_PARAMS = [pytest.param("dynamo", marks=pytest.mark.skipif(
    not HAS_DYNAMO, reason=f"torch {torch.__version__} has no dynamo exporter")), "torchscript"]

REQUIRED_LAYER_FIELDS = ("file", "module", "type", "call", "output_index", "dtype", "shape")


def load_manifest(out_dir):
    with open(os.path.join(out_dir, "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


def load_tensor(out_dir, rel):
    return np.load(os.path.join(out_dir, rel), allow_pickle=False)


def check_file(out_dir, rel, dtype, shape):
    """The file loads with numpy and has the recorded dtype and shape."""
    array = load_tensor(out_dir, rel)
    if dtype == "bfloat16":
        assert array.dtype == np.dtype("V2"), rel
    else:
        assert array.dtype == np.dtype(dtype), (rel, array.dtype, dtype)
    assert list(array.shape) == list(shape), rel
    return array


def check_manifest(out_dir):
    """Required fields and schema; every listed file exists with its dtype/shape."""
    m = load_manifest(out_dir)
    assert m["schema"] == "parity.torch_dump/1"
    assert m["torch_version"] == torch.__version__
    for key in ("inputs", "outputs", "layers"):
        assert key in m
    for section in ("input_details", "output_details"):
        for d in m[section]:
            check_file(out_dir, d["file"], d["dtype"], d["shape"])
    assert set(m["inputs"].values()) == {d["file"] for d in m["input_details"]}
    assert set(m["outputs"].values()) == {d["file"] for d in m["output_details"]}
    files = [layer["file"] for layer in m["layers"]]
    assert len(files) == len(set(files)), "layer file names must be unique"
    for i, layer in enumerate(m["layers"]):
        for field in REQUIRED_LAYER_FIELDS:
            assert field in layer, (field, layer)
        assert layer["file"].startswith(f"layer_{i:04d}_"), layer["file"]
        check_file(out_dir, layer["file"], layer["dtype"], layer["shape"])
    return m


def run_direct(model, args, slow=False):
    """The model's own outputs, computed as dump() runs it: eval, no_grad; when
    slow, with the fused transformer fast path off (torch >= 2.1 has a switch;
    older torch skips the fast path when grad is enabled)."""
    model.eval()
    mha = getattr(torch.backends, "mha", None)
    switch = slow and mha is not None and hasattr(mha, "set_fastpath_enabled")
    before = mha.get_fastpath_enabled() if switch else None
    try:
        if switch:
            mha.set_fastpath_enabled(False)
        with torch.enable_grad() if slow and not switch else torch.no_grad():
            return model(*args)
    finally:
        if switch:
            mha.set_fastpath_enabled(before)


@pytest.fixture
def tmp_dir(tmp_path):
    return str(tmp_path)


TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
# The package (python/) and the zoo (python/tests) on the path, one thread, no warnings.
MODULE_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(TESTS_DIR), TESTS_DIR]),
                  OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")


def run_module(module, *argv):
    """`python -m MODULE ARGV...` as a child process, output captured."""
    return subprocess.run([sys.executable, "-m", module, *argv], env=MODULE_ENV,
                          capture_output=True, text=True, timeout=300)


# Parallel runs. `make python-tests` runs `pytest -n JOBS --dist loadgroup` (pytest-xdist), and
# a worker runs whole groups: a test module is one group, so its module fixtures (exports, dumps,
# a demo) are built once, on one worker. Modules that share more than their own tmp_path are one
# group together:
SHARED_GROUPS = {
    # build/torch-cache: zoo/cache.py's lock makes two builders safe, but the second would wait
    # idle for the whole build; one worker builds it, then reads it twice.
    "test_zoo.py": "zoo-cache", "test_alignment_zoo.py": "zoo-cache",
    # One local Ray cluster at a time: a cluster claims every core (num_cpus=os.cpu_count()),
    # two would share them under these tests' deadlines (120-500 s), and test_ray_entries
    # checks that ~/.ray is left alone. Every module with a test marked `ray` is here
    # (pytest_collection_modifyitems refuses one that is not).
    "test_dataset.py": "ray", "test_dataset_ray.py": "ray", "test_ray_entries.py": "ray", "test_corpus.py": "ray",
}
# The longest groups start first, so that no worker begins one of them near the end while the
# other sits idle (measured: docs/bench.md, "make test time").
LONGEST_FIRST = ("test_zoo_real.py", "ray", "zoo-cache", "test_fix.py", "test_generation.py", "test_decode_sizes.py",
                 "test_genai.py", "test_torch_cli.py", "test_sizes.py")


def group_of(nodeid):
    """The group of a test: its module's file name, or the shared group of that module."""
    name = os.path.basename(nodeid.split("::", 1)[0])
    return SHARED_GROUPS.get(name, name)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    unshared = sorted({item.path.name for item in items if item.get_closest_marker("ray")
                       and SHARED_GROUPS.get(item.path.name) != "ray"})
    if unshared:
        raise pytest.UsageError(f"{', '.join(unshared)}: tests marked ray, not in conftest.SHARED_GROUPS' "
                                "group 'ray' (two local Ray clusters would run at once)")
    if hasattr(config, "workerinput"):  # an xdist worker: its collection order is the scheduler's
        rank = {group: i for i, group in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(group_of(item.nodeid), len(rank)))  # stable


# xdist's own loadgroup (xdist_group marks) does nothing with pytest 9.2: it renames the test's
# `_nodeid`, which pytest 9.2 no longer reads (pytest-dev/pytest-xdist#1386). This scheduler
# groups by group_of() instead, in the workers' collection order (LONGEST_FIRST).
@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return group_of(nodeid)

        def schedule(self):
            self.config.option.loadscopereorder = False  # not by test count: LONGEST_FIRST
            super().schedule()

    return GroupScheduling(config, log)
