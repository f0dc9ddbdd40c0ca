"""Validation reports which assertion failed and what came back; batched checks isolate a hanging program."""

import json

from benchsmith.builders.humanext.sources import load_pairs
from benchsmith.builders.humanext.validate import run_batched, validate_pairs
from benchsmith.evaluate.sandbox import Sandbox
from tests.timing import scaled


def _pair(tmp_path, reference, tests):
    rec = {"pair_id": "v/0", "imports": ["from typing import List"],
           "auxiliary": 'def head(xs: List[int]) -> int:\n    """First element."""\n    return xs[0]\n',
           "target_signature": 'def head_plus(xs: List[int], k: int) -> int:\n    """First element plus k."""\n',
           "target_reference": reference, "tests": tests}
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    return load_pairs(str(path))[1][0]


TESTS = ("def check(candidate):\n    assert candidate([1], 1) == 2\n    assert abs(candidate([5, 1], 2) - 7) < 1e-9\n"
         "    assert candidate([], 0) == 0\n\ncheck(head_plus)\n")


def test_passing_and_failing_references(tmp_path):
    sb = Sandbox(timeout=scaled(10), workers=2)
    good = _pair(tmp_path, "    return head(xs) + k if xs else k\n", TESTS)
    wrong = _pair(tmp_path, "    return head(xs) + k * k if xs else k\n", TESTS)
    raising = _pair(tmp_path, "    return head(xs) + k\n", TESTS)
    g, w, r = validate_pairs([good, wrong, raising], sb)
    assert g.passed and g.assertion is None
    assert not w.passed and w.line == 3
    assert w.assertion == "assert abs(candidate([5, 1], 2) - 7) < 1e-9" and w.returned == "9"
    assert not r.passed and r.line == 4 and r.assertion == "assert candidate([], 0) == 0"
    assert r.returned is None and r.error.startswith("IndexError")


def test_run_batched_isolates_a_hanging_program():
    sb = Sandbox(timeout=scaled(1), workers=2)
    out = run_batched([["x = 1", "while True:\n    pass", "raise ValueError('no')"], ["assert 1 + 1 == 2"]], sb)
    assert out[1] == [None]
    assert out[0][0] is None
    assert out[0][1] is not None  # the hang, found by rerunning the batch one program per process
    assert "ValueError" in out[0][2]
