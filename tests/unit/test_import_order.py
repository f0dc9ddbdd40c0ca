"""Every module imports first: a module that only imports after some other module (a cycle the import order
happens to hide, as confine.records -> runner -> runner.confinement -> confine.capabilities once did) fails here.
Each module is imported into an interpreter with no benchsmith module loaded yet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The core and the packages every command loads; the analyzers, builders and evaluate packages come through them.
PACKAGES = {"benchsmith": ROOT / "benchsmith", "benchsmith.analyzers": ROOT / "analyzers",
            "benchsmith.builders": ROOT / "builders", "benchsmith.evaluate": ROOT / "evaluate"}
HEAVY = ("vllm", "torch", "ray")  # optional extras a module may need at import: not this test's business

PROGRAM = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "benchsmith" or m.startswith("benchsmith.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError as exc:
        if not any(h in str(exc) for h in %r):
            failed.append(f"{name}: {exc}")
print("\\n".join(failed))
""" % (HEAVY,)


def _modules() -> list[str]:
    names = []
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            if "driver" in path.parts or path.name.startswith("_pylint") or path.name == "init_program.py":
                continue  # programs run by a toolchain, never imported
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            names.append(".".join([package, *parts]))
    return names


def test_every_module_imports_on_its_own():
    names = _modules()
    assert len(names) > 150
    res = subprocess.run([sys.executable, "-c", PROGRAM, *names], capture_output=True, text=True, timeout=600,
                         cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "", res.stdout
