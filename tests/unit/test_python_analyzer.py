"""The Python analyzer on small trees written in the test: import forms, stubs, and hostile input."""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.analyzers.python import ModuleIndex, stub_file
from benchsmith.cli import main
from benchsmith.files import SourceFile, snapshot


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


PKG = {
    "pkg/__init__.py": "",
    "pkg/core.py": "class Engine:\n    def start(self):\n        return 1\n\ndef helper(x):\n    return x\n\nLIMIT = 3\n",
    "pkg/api.py": "from .core import Engine, helper\n",
    "pkg/use.py": (
        "import os\n"
        "from .core import Engine as E\n"
        "from pkg import core\n"
        "import pkg.core\n"
        "from .core import *\n"
        "\n"
        "def run():\n"
        "    e = E()\n"
        "    e.start()\n"
        "    v = core.LIMIT + pkg.core.helper(2)\n"
        "    return helper(v) + LIMIT + os.getpid()\n"
    ),
}


def analyze(root: Path, tmp: Path, **opts):
    analyzer = get_analyzer("python", AnalyzerOptions(**opts))
    snap = snapshot(root, analyzer.extensions, tmp / "snap", repo_name="r")
    work = tmp / "work"
    work.mkdir()
    return snap, analyzer.analyze(snap, work)


def test_import_forms_become_refs(tmp_path):
    root = write(tmp_path / "repo", PKG)
    _, result = analyze(root, tmp_path)
    got = {(r.line, r.symbol, r.diagnostic, r.defining_file) for r in result.refs}
    assert (8, "start", "E1101", "pkg/core.py") in got  # instance of an aliased class
    assert (9, "LIMIT", "E1101", "pkg/core.py") in got  # from pkg import core
    assert (9, "helper", "E1101", "pkg/core.py") in got  # import pkg.core (nested stub)
    assert (10, "helper", "E0602", "pkg/core.py") in got  # star import
    assert all(r.file == "pkg/use.py" for r in result.refs)
    lines = PKG["pkg/use.py"].splitlines()
    for r in result.refs:
        assert lines[r.line][r.column:].startswith(r.symbol)


def test_stub_keeps_other_lines_and_maps_back():
    files = [SourceFile(p, t) for p, t in PKG.items()]
    stubs = stub_file(files[-1], ModuleIndex(files))
    assert "import os\n" in stubs.stubbed_text  # external import untouched
    assert "class E:" in stubs.stubbed_text and "class pkg:" in stubs.stubbed_text
    original = PKG["pkg/use.py"].splitlines()
    for new_line, old in zip(stubs.stubbed_text.splitlines(), stubs.line_map):
        if old is not None:
            assert new_line == original[old]


def test_repository_pylint_config_and_plugins_are_never_loaded(tmp_path):
    marker = tmp_path / "PLUGIN_WAS_LOADED"
    evil = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('pwned')\ndef register(linter):\n    pass\n"
    cfg = "[MAIN]\nload-plugins=evilplugin\ninit-hook=import evilplugin\n"
    files = dict(PKG)
    files.update({
        "evilplugin.py": evil,
        "pylintrc": cfg,
        ".pylintrc": cfg,
        "setup.cfg": "[pylint.MAIN]\nload-plugins=evilplugin\n",
        "pyproject.toml": "[tool.pylint.main]\nload-plugins = ['evilplugin']\n",
    })
    root = write(tmp_path / "repo", files)
    _, result = analyze(root, tmp_path)
    assert result.refs, "analysis still works"
    assert not marker.exists()
    # The same through the CLI, from inside the repository directory (where pylint would look for config).
    cwd = os.getcwd()
    try:
        os.chdir(root)
        assert main(["build", "cceval", "--lang", "python", "--repo", ".", "--output", str(tmp_path / "out"),
                     "--retrievers", "none", "--no-card", "-q", "--workers", "1"]) == 0
    finally:
        os.chdir(cwd)
    assert not marker.exists()


def test_hostile_files_are_recorded_and_the_rest_analysed(tmp_path):
    files = dict(PKG)
    files.update({
        "pkg/binary.py": b"\x00\x01\x02ELF" * 10,
        "pkg/latin1.py": "x = 'caf\xe9'\n".encode("latin-1"),
        "pkg/broken.py": "def f(:\n    pass\n",
    })
    root = write(tmp_path / "repo", files)
    (root / "pkg" / "passwd.py").symlink_to("/etc/passwd")
    (root / "pkg" / "up").symlink_to("..")
    snap, result = analyze(root, tmp_path)
    reasons = {e.item_id.split("/", 1)[1]: str(e.reason) for e in snap.exclusions + result.exclusions}
    assert reasons["pkg/binary.py"] == "binary_file"
    assert reasons["pkg/latin1.py"] == "not_utf8"
    assert reasons["pkg/passwd.py"] == "symlink_outside_repository"
    assert reasons["pkg/up"] == "symlink"
    assert reasons["pkg/broken.py"] == "syntax_error"
    assert result.refs
    assert not any("root:" in f.text for f in snap.files)


def test_pylint_timeout_is_a_recorded_exclusion(tmp_path):
    root = write(tmp_path / "repo", PKG)
    _, result = analyze(root, tmp_path, timeout=0.01)
    assert [str(e.reason) for e in result.exclusions] == ["toolchain_timeout"]
    assert result.refs == []


def test_cli_build_records_every_exclusion(tmp_path):
    root = write(tmp_path / "repo", PKG)
    out = tmp_path / "out"
    assert main(["build", "cceval", "--lang", "python", "--repo", str(root), "--repo", str(tmp_path / "missing"),
                 "--output", str(out), "--retrievers", "none", "--no-card", "-q", "--min-prompt-lines", "1",
                 "--workers", "1"]) == 0
    stats = json.loads((out / "python" / "stats.json").read_text())
    excluded = [json.loads(l) for l in (out / "python" / "excluded.jsonl").read_text().splitlines()]
    assert stats["dropped"]["source_not_found"] == 1
    assert sum(stats["dropped"].values()) == len(excluded)
    assert stats["examples"] >= 1
