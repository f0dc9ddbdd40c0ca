"""The released HumanExtension pairs in the sandbox: human references pass exactly where a plain interpreter
says they pass (145 of 151; the 6 known-invalid pairs fail the same way), and a wrong implementation of every
target fails.  Templates are rendered here independently of the builder: each ``{{ name }}`` becomes ``name``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchsmith.evaluate.sandbox import Sandbox, Verdict
from tests.shared_data import shared_data
from tests.timing import scaled

DATA = shared_data("humanextension/data.json")
INVALID = {"factorial", "all_sorted", "prod_signs_within_threshold", "sum_odd_collatz", "num_valid_birthdays",
           "biggest"}
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def render(template: str) -> str:
    return PLACEHOLDER.sub(lambda m: m.group(1), template)


def import_lines(imports) -> list[str]:
    out = []
    for module, names in imports:
        if module is None:
            out += [f"import {n}" for n in names]
        else:
            out.append(f"from {module} import {', '.join(names)}")
    return out


def program(pair: dict, target_code: str) -> str:
    parts = import_lines(pair["imports"]) + [render(pair["auxiliary_function"]["template"]), target_code,
                                              pair["tests"]]
    return "\n\n\n".join(p.rstrip("\n") for p in parts) + "\n"


def wrong_target(pair: dict) -> str:
    """The target's signature line(s) with a body that returns a constant of the wrong kind."""
    code = render(pair["target_function"]["template"])
    header = code[: code.index(":\n", code.index("def ")) + 2]
    return header + "    return None\n"


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    if not DATA.is_file():
        pytest.skip(f"released HumanExtension data not found at {DATA}")
    data = json.loads(DATA.read_text())
    assert len(data) == 151
    return data


def plain_interpreter(programs: list[str], tmp_path: Path) -> list[bool]:
    def one(i_prog):
        i, prog = i_prog
        path = tmp_path / f"p{i}.py"
        path.write_text(prog)
        try:
            res = subprocess.run([sys.executable, str(path)], capture_output=True, timeout=30, cwd=tmp_path,
                                 stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return False
        return res.returncode == 0

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(one, enumerate(programs)))


def test_references_pass_in_the_sandbox_exactly_where_they_pass_plainly(pairs, tmp_path):
    programs = [program(p, render(p["target_function"]["template"])) for p in pairs]
    names = [p["target_function"]["name"] for p in pairs]
    plain = plain_interpreter(programs, tmp_path)
    with Sandbox(timeout=scaled(10.0), workers=4) as sb:
        results = sb.run_many(programs)
    sandboxed = [r.passed for r in results]
    assert sandboxed == plain
    assert sum(sandboxed) == 145
    assert {n for n, ok in zip(names, sandboxed) if not ok} == INVALID
    # the invalid ones fail on their own assertions/errors, not on the sandbox
    for n, r in zip(names, results):
        if n in INVALID:
            assert r.verdict is Verdict.FAILED, (n, r.verdict, r.detail)


def judged(pairs: list[dict], targets: list[str]):
    """Each pair's code (no tests) through the judge: the candidate runs in the sandbox, we compare."""
    from benchsmith.evaluate.humanext.judge import harness_program, judge, plan_tests

    plans = [plan_tests(p["tests"]) for p in pairs]
    sources = ["\n\n\n".join(x.rstrip("\n") for x in import_lines(p["imports"])
                              + [render(p["auxiliary_function"]["template"]), target]) + "\n"
               for p, target in zip(pairs, targets)]
    with Sandbox(timeout=scaled(10.0), workers=4) as sb:
        results = sb.run_many([harness_program(s, plan) for s, plan in zip(sources, plans)])
    return [judge(plan, r) for plan, r in zip(plans, results)]


def test_references_judged_in_the_parent_pass_exactly_where_they_pass_plainly(pairs):
    """Every released test parses for the judge; its verdicts are the plain interpreter's: 145 pass, 6 fail."""
    judgments = judged(pairs, [render(p["target_function"]["template"]) for p in pairs])
    names = [p["target_function"]["name"] for p in pairs]
    assert {n for n, j in zip(names, judgments) if not j.passed} == INVALID
    assert sum(j.passed for j in judgments) == 145
    for n, j in zip(names, judgments):
        if n in INVALID:
            assert j.verdict is Verdict.FAILED and j.assertion.startswith("assert candidate("), (n, j)
    wrong = judged(pairs, [wrong_target(p) for p in pairs])
    assert [n for n, j in zip(names, wrong) if j.passed] == []


def test_wrong_implementations_fail(pairs, tmp_path):
    programs = [program(p, wrong_target(p)) for p in pairs]
    with Sandbox(timeout=scaled(10.0), workers=4) as sb:
        results = sb.run_many(programs)
    passing = [p["target_function"]["name"] for p, r in zip(pairs, results) if r.passed]
    assert passing == []
    assert all(r.verdict in (Verdict.FAILED,) for r in results)
