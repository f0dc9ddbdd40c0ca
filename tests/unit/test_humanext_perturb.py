"""Perturbations work on source text and keep the pair consistent (checked on the syntax tree and by running it)."""

import ast
import json
import random

import pytest

from benchsmith.builders.humanext.perturb import local_names, perturb
from benchsmith.builders.humanext.sources import load_pairs
from benchsmith.evaluate.humanext.records import Perturbation
from tests.timing import scaled

AUX = '''def fact(n: int) -> int:
    """n factorial, recursively.

    >>> fact(4)
    24
    """
    if n <= 1:
        return 1
    result = n * fact(n - 1)
    return result
'''
SIG = 'def fact_sum(ns: list) -> int:\n    """Sum of the factorials of ns."""\n'
REF = "    total = 0\n    for k in ns:\n        total += fact(k)\n    return total\n"
TESTS = "def check(candidate):\n    assert candidate([1, 3]) == 7\n\ncheck(fact_sum)\n"


@pytest.fixture()
def pair(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"pair_id": "p/0", "imports": [], "auxiliary": AUX, "target_signature": SIG,
                                "target_reference": REF, "tests": TESTS}) + "\n")
    return load_pairs(str(path))[1][0]


def test_renamed_renames_def_recursive_call_doctest_and_target(pair):
    view = perturb(pair, Perturbation.RENAMED, random.Random(1), ["fact", "ns", "strlen", "below_zero"])
    assert view.name in {"strlen", "below_zero"}  # never the own name, never a name the pair uses ("ns")
    assert f"def {view.name}(n: int)" in view.code
    assert f"n * {view.name}(n - 1)" in view.code
    assert f">>> {view.name}(4)" in view.code
    assert "fact" not in view.code.replace("factorial", "")
    assert view.target_mapping == {"fact": view.name}
    assert f"total += {view.name}(k)" in pair.target.body(view.target_mapping)
    # the same rng state gives the same name
    assert perturb(pair, Perturbation.RENAMED, random.Random(1), ["strlen", "below_zero"]).name == view.name


def test_no_docstring_and_docstring_as_comments(pair):
    plain = perturb(pair, Perturbation.NO_DOCSTRING, random.Random(0), [])
    node = ast.parse(plain.code).body[0]
    assert ast.get_docstring(node) is None
    assert plain.code.split("\n")[1] == "    if n <= 1:"
    com = perturb(pair, Perturbation.DOCSTRING_AS_COMMENTS, random.Random(0), [])
    assert "    # n factorial, recursively.\n    #\n    # >>> fact(4)\n    # 24\n    if n <= 1:" in com.code
    assert ast.get_docstring(ast.parse(com.code).body[0]) is None


def test_renamed_locals_keeps_parameters_and_is_consistent(pair):
    assert local_names(pair.auxiliary) == ["result"]
    view = perturb(pair, Perturbation.RENAMED_LOCALS, random.Random(0), [])
    assert view.info["renamed"] == {"result": "var_0"}
    assert "var_0 = n * fact(n - 1)\n    return var_0" in view.code
    assert "def fact(n: int)" in view.code  # parameters are the interface: unchanged


def test_samples_of_random_perturbations_are_distinct(pair):
    names = [perturb(pair, Perturbation.RENAMED, random.Random(5), ["strlen", "below_zero", "fib"], sample=s).name
             for s in range(3)]
    assert sorted(names) == ["below_zero", "fib", "strlen"]
    codes = {perturb(pair, Perturbation.DEAD_CODE, random.Random(5), [], sample=s).code for s in range(10)}
    assert len(codes) == 10


def test_dead_code_is_inserted_at_a_statement_boundary(pair):
    seen = set()
    for seed in range(12):
        view = perturb(pair, Perturbation.DEAD_CODE, random.Random(seed), [])
        fn = ast.parse(view.code).body[0]
        assert len(fn.body) == 1 + 3 + 1  # docstring + the three statements + one inserted
        seen.add((view.info["snippet"], view.info["statement_index"]))
        assert view.info["variable"] == "unused"
    assert len(seen) > 3  # the rng chooses both what and where


def test_none_is_the_human_auxiliary(pair):
    assert perturb(pair, Perturbation.NONE, random.Random(0), []).code == AUX.rstrip("\n")


def test_perturbed_programs_still_pass(pair):
    from benchsmith.evaluate.sandbox import Sandbox

    programs = []
    for kind in Perturbation:
        view = perturb(pair, kind, random.Random(3), ["strlen", "below_zero"])
        programs.append(view.code + "\n\n\n" + pair.target.code(view.target_mapping) + "\n" + pair.tests)
    programs.append(AUX + "\n\n" + SIG + "    return fact(ns[0])\n" + "\n" + pair.tests)  # a wrong target fails
    results = Sandbox(timeout=scaled(10), workers=2).run_many(programs)
    assert [r.passed for r in results] == [True] * len(Perturbation) + [False]
