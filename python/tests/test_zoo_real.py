"""The real exporters' zoo (issue 40): parity's verdicts on models made by
Ultralytics, torch's two exporters and ONNX Runtime's quantizers, from
configs with seeded random weights (python/tests/zoo_real; cached in
$PARITY_ZOO_REAL_CACHE, default build/zoo-real-cache: a run with the cache
current rebuilds nothing).

Each case runs the command a user runs (`check --torch`, `check
--reference-model`) and must give the TRUE verdict: a healthy export PASSes,
a planted fault FAILs naming the planted module and, being an fp32 weight,
names no bf16/fp16/tf32 arithmetic; a derived copy's verdict follows its
measured truth (zoo_real/cases.py). The cases parity gets wrong today are
xfail(strict=True) with the verdict observed: each flips to a failure (XPASS)
the moment a fix lands, and then loses its mark. `locate --reference torch:`
runs on the planted faults and the wrapper (the scoreboard, bench/zoo, runs
it everywhere)."""

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("transformers")
pytest.importorskip("timm")
pytest.importorskip("ultralytics", reason="python/requirements-zoo.txt is not installed")

from parity_binary import PARITY, needs_parity  # noqa: E402
from zoo_real import cache as zoo_cache  # noqa: E402
from zoo_real.cases import CASES, expected_of  # noqa: E402
from zoo_real.verdicts import judge, run_case  # noqa: E402

pytestmark = [needs_parity, pytest.mark.zoo_real]

# What parity says today where it is wrong (measured by bench/zoo/scoreboard.py;
# docs/verdicts.md). Remove an entry when its fix lands (the test then XPASSes: strict).
WRONG_TODAY = {
}

LOCATED = {c.name for c in CASES if c.planted} | {"yolo_ultra_wrapped"}


def _param(case):
    marks = [pytest.mark.xfail(strict=True, reason=WRONG_TODAY[case.name])] if case.name in WRONG_TODAY else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.fixture(scope="module")
def zoo():
    cache_dir = zoo_cache.default_cache_dir()
    return cache_dir, zoo_cache.build(cache_dir)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return str(tmp_path_factory.mktemp("zoo_real_reports"))


def test_every_group_builds(zoo):
    _, stamps = zoo
    failed = {g: s.get("error") for g, s in stamps.items() if s["status"] != "ok"}
    assert not failed, failed


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_verdict_is_true(zoo, reports, case):
    cache_dir, stamps = zoo
    if stamps[case.group]["status"] != "ok":
        pytest.skip(f"{case.group} did not build: {stamps[case.group].get('error')}")
    expected = expected_of(case, stamps)
    assert expected in ("PASS", "FAIL"), f"no expected verdict for {case.name}"
    result = run_case(case, cache_dir, PARITY, reports, locate=case.name in LOCATED)
    problems = judge(case, expected, result)
    assert not problems, f"{case.name}: expected {expected}; " + "; ".join(problems)


def test_the_cases_cover_every_class_of_issue_40():
    """Planted faults of every class (a deep weight, the small part of a
    concatenated output, the wrapper, an attention projection), a saturating
    int8 copy, healthy twins through both exporters."""
    planted = {c.planted for c in CASES if c.planted}
    assert {"model.4.m.1.cv1", "model.model.4.m.1.cv1", "model.22.cv3",
            "model.layers.1.self_attn.v_proj"} <= planted
    assert any(c.name == "yolo_int8_saturated" for c in CASES)
    healthy = {c.model for c in CASES if c.kind == "torch" and c.expected == "PASS"}
    assert {"torchscript.onnx", "dynamo.onnx", "ultra.onnx"} <= healthy
    assert set(WRONG_TODAY) <= {c.name for c in CASES}
