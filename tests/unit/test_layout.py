"""The house rules of ``evaluate/`` that a refactor could silently break: module size, the direction of imports,
and the fork server program that is assembled from files rather than imported."""

from __future__ import annotations

import ast
from pathlib import Path

import benchsmith.evaluate

EVALUATE = Path(benchsmith.evaluate.__file__).resolve().parent
# screen is the last evaluate module that reads a builder (its self-check); it is due to become a cceval step
BUILDER_READERS = {"screen.py"}


def _modules():
    return sorted(p for p in EVALUATE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_evaluate_module_over_400_lines():
    long = {str(p.relative_to(EVALUATE)): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long


def test_evaluate_does_not_import_builders():
    readers = set()
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.startswith("benchsmith.builders") for n in names):
                readers.add(str(path.relative_to(EVALUATE)))
    assert readers <= BUILDER_READERS, readers


def test_fork_server_program_is_one_valid_program_of_its_parts():
    from benchsmith.evaluate.sandbox import forkserver

    parts = [EVALUATE / "sandbox" / name for name in forkserver.ZYGOTE_PARTS]
    assert all(p.is_file() for p in parts)
    assert parts[-1].name == "zygote.py"  # it ends by calling main(): everything else must be defined before
    tree = ast.parse(forkserver._ZYGOTE_SOURCE)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"main", "private_filesystem", "make_run_cgroup", "open_cgroup"} <= defined
    # standard library only: it runs before (and without) benchsmith on the path
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "benchsmith" not in imported
