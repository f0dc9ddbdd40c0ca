"""The house rules a refactor could silently break: no import cycle between the four packages, and in
``evaluate/`` module size, the direction of imports and the fork server program that is assembled from files
rather than imported."""

from __future__ import annotations

import ast
from pathlib import Path

import benchsmith
import benchsmith.analyzers
import benchsmith.builders
import benchsmith.evaluate

EVALUATE = Path(benchsmith.evaluate.__file__).resolve().parent
PACKAGES = {"core": Path(benchsmith.__file__).resolve().parent,
            "analyzers": Path(benchsmith.analyzers.__file__).resolve().parent,
            "builders": Path(benchsmith.builders.__file__).resolve().parent,
            "evaluate": EVALUATE}
# The entry points sit above all four packages (they run the commands of every one), so what they import is not an
# edge of the core; the command table names its modules as registry strings, not imports.
ENTRY_POINTS = {"cli.py", "demo.py", "__main__.py"}


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function (a function-local import is still an edge);
    imports under ``if TYPE_CHECKING:`` only name types and never run, so they are not edges."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "benchsmith":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in ("analyzers", "builders", "evaluate") else "core"


def package_graph() -> dict[str, dict[str, set[str]]]:
    """package -> imported package -> the files that make the edge."""
    graph: dict[str, dict[str, set[str]]] = {name: {} for name in PACKAGES}
    for name, root in PACKAGES.items():
        files = root.glob("*.py") if name == "core" else root.rglob("*.py")
        for path in sorted(files):
            if "__pycache__" in path.parts or (name == "core" and path.name in ENTRY_POINTS):
                continue
            for module in _imported(path):
                target = _package_of(module)
                if target is not None and target != name:
                    graph[name].setdefault(target, set()).add(str(path.relative_to(root.parent)))
    return graph


def test_no_import_cycle_between_the_four_packages():
    graph = package_graph()
    state: dict[str, str] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycle = trail[trail.index(nxt):] + [node, nxt] if nxt in trail else [node, nxt]
                edges = {f"{a} -> {b}": sorted(graph[a][b]) for a, b in zip(cycle, cycle[1:])}
                raise AssertionError(f"import cycle {' -> '.join(cycle)}: {edges}")
            if nxt not in state:
                visit(nxt, trail + [node])
        state[node] = "done"

    for package in sorted(graph):
        if package not in state:
            visit(package, [])


def test_the_cycle_check_sees_function_local_imports(tmp_path):
    # the builders <-> evaluate cycle was made of imports inside functions
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from benchsmith.builders.cceval.derived import rewrite_derived\n")
    assert _package_of(next(iter(_imported(path)))) == "builders"


def _modules():
    return sorted(p for p in EVALUATE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_evaluate_module_over_400_lines():
    long = {str(p.relative_to(EVALUATE)): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long


def test_evaluate_does_not_import_builders():
    assert "builders" not in package_graph()["evaluate"], package_graph()["evaluate"].get("builders")


def test_the_core_imports_none_of_the_three_packages():
    assert not package_graph()["core"], package_graph()["core"]


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
