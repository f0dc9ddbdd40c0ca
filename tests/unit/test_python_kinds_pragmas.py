"""Hostile-style: a repository whose files are full of pylint pragmas (skip-file, disable=all, disable-all,
disable=no-member, disable-next, enable, inline and block-level) keeps every example its pragma-free control
has, at the same positions, and the vetted snapshot keeps its bytes; the pragmas are made inert only in the
copies pylint reads."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from benchsmith.analyzers import get_analyzer
from benchsmith.analyzers.python.pragmas import neutralise
from benchsmith.files import snapshot

HOSTILE = Path(__file__).resolve().parents[1] / "fixtures" / "python" / "pragmas"
_PRAGMA_COMMENT = re.compile(r"[ \t]*#[^\n]*pylint:[^\n]*")


def _refs(root: Path, tmp: Path):
    analyzer = get_analyzer("python")
    snap = snapshot(root, analyzer.extensions, tmp / "snap", repo_name="r")
    (tmp / "work").mkdir()
    result = analyzer.analyze(snap, tmp / "work")
    return snap, result, sorted((r.file, r.line, r.column, r.symbol, r.kind, r.defining_file) for r in result.refs)


def test_pragmas_do_not_remove_examples(tmp_path):
    control = tmp_path / "control"
    shutil.copytree(HOSTILE, control)
    for f in control.rglob("*.py"):  # the same code with every pragma comment cut (lines and columns kept)
        f.write_text(_PRAGMA_COMMENT.sub("", f.read_text()))
    assert "pylint:" not in "".join(f.read_text() for f in control.rglob("*.py"))
    _, _, expected = _refs(control, tmp_path / "c")
    snap, result, got = _refs(HOSTILE, tmp_path / "h")
    assert len(expected) >= 8
    assert got == expected
    files = {r[0] for r in got}
    assert {"lib/use_skip.py", "lib/use_disable_all.py", "lib/use_no_member.py", "lib/use_inline.py"} <= files
    assert result.stats["files_with_pylint_pragmas"] == 6
    for f in snap.files:  # the snapshot the examples are cut from is the repository's own text
        assert (snap.root / f.path).read_text() == (HOSTILE / f.path).read_text() == f.text


def test_neutralise_keeps_positions_and_strings():
    text = ('x = 1  # pylint: disable=no-member\r\n'
            '#pylint:skip-file\n'
            's = "# pylint: skip-file"  # noqa # pylint: disable=E1101 ; pylint: enable=E1101\n'
            '"""\n# pylint: disable=all inside a docstring\n"""\n'
            'y = "é" # pylint: disable-next=no-member\n')
    out = neutralise(text)
    assert len(out) == len(text) and out.splitlines() != text.splitlines()
    assert [len(a) for a in out.splitlines(True)] == [len(a) for a in text.splitlines(True)]
    assert "pylint:" not in out.replace('"# pylint: skip-file"', "").replace("# pylint: disable=all inside", "")
    assert '"# pylint: skip-file"' in out and "# pylint: disable=all inside a docstring" in out  # strings kept
    assert out.count("pylint;") == 5


def test_neutralise_leaves_other_texts_alone():
    assert neutralise("x = 1\n") == "x = 1\n"
    broken = "def f(:\n    '''unterminated  # pylint: skip-file\n"
    assert neutralise(broken) == broken  # does not tokenize: pylint cannot read its pragmas either
