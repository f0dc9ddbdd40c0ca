"""Kinds of Python cross-file uses, at the released cursor (right before the name), on fixtures in the shapes of
the released repositories: members inherited from a base class in another file (zxlive's panels), names reached
through a package's submodule or re-exported by a package, decorators, annotations, bases, constructors; and
namespace packages (PEP 420).  Negative controls: a third-party class re-exported by a project module, a member
of a class whose only base is external, a standard-library module."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.analyzers import get_analyzer
from benchsmith.analyzers.python import ModuleIndex
from benchsmith.files import SourceFile, snapshot
from benchsmith.records import ReferenceKind as K
from benchsmith.records import Reason, Stage

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "python"


def _analyze(name: str, tmp: Path):
    analyzer = get_analyzer("python")
    snap = snapshot(FIXTURES / name, analyzer.extensions, tmp / "snap", repo_name=name)
    (tmp / "work").mkdir()
    return snap, analyzer.analyze(snap, tmp / "work")


def _at(root: Path, file: str, marked: str) -> tuple[int, int]:
    """(line, column) of the ``|`` in ``marked``, a fragment of one line of ``file`` (the released cursor)."""
    fragment = marked.replace("|", "")
    lines = (root / file).read_text().split("\n")
    hits = [(i, line.index(fragment)) for i, line in enumerate(lines) if fragment in line]
    assert len(hits) == 1, (file, marked)
    line, col = hits[0]
    return line, col + marked.index("|")


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    return _analyze("kinds", tmp_path_factory.mktemp("kinds"))


@pytest.mark.parametrize("file, marked, kind, defining", [
    # zxlive edit_panel.py: ``self.`` | ``splitter.addWidget(self.sidebar)``, splitter set up in BasePanel
    ("app/edit_panel.py", "self.|splitter.addWidget", K.INHERITED_MEMBER, "app/base_panel.py"),
    ("app/edit_panel.py", "self.|refresh()", K.INHERITED_MEMBER, "app/base_panel.py"),
    ("app/edit_panel.py", "return self.|origin.x", K.INHERITED_MEMBER, "app/base_panel.py"),
    # two levels: ZoomPanel(EditPanel(BasePanel)), all but BasePanel in this file
    ("app/edit_panel.py", "return self.|origin.shifted", K.INHERITED_MEMBER, "app/base_panel.py"),
    ("app/edit_panel.py", "super().|refresh()", K.INHERITED_MEMBER, "app/base_panel.py"),
    # a member Fade(QVariantAnimation) declares itself (its setEndValue is Qt's: never a candidate)
    ("app/edit_panel.py", "return anim.|target", K.MEMBER, "app/base_panel.py"),
    # bases pylint cannot infer in the stubbed run (a stub module's attribute; an uninstalled Qt class beside
    # the repository's): found by the ast scan of the class's base chain
    ("app/tool_panel.py", "return self.|splitter.count()", K.INHERITED_MEMBER, "app/base_panel.py"),
    ("app/tool_panel.py", "super().|refresh()", K.INHERITED_MEMBER, "app/base_panel.py"),
    ("app/tool_panel.py", "return self.|origin", K.INHERITED_MEMBER, "app/base_panel.py"),
    # ``pkg.`` | ``submodule.Name``: the package imports none of its submodules
    ("app/report.py", "app.|units.METRE", K.MODULE_MEMBER, "app/units.py"),
    # ``import app.shapes.circle``: its stub nests the submodules, the scan finds them
    ("app/report.py", "return app.|shapes.circle", K.MODULE_MEMBER, "app/shapes/__init__.py"),
    ("app/report.py", "app.shapes.|circle.Circle(1)", K.MODULE_MEMBER, "app/shapes/circle.py"),
    ("app/report.py", "app.shapes.circle.|Circle(1)", K.CONSTRUCTOR, "app/shapes/circle.py"),
    ("app/report.py", "app.|units.INCH", K.MODULE_MEMBER, "app/units.py"),
    # re-exported by app/shapes/__init__.py, by name and by a star import
    ("app/report.py", "shapes.|Circle(3)", K.MODULE_MEMBER, "app/shapes/circle.py"),
    ("app/report.py", "shapes.|Square(2)", K.MODULE_MEMBER, "app/shapes/square.py"),
    ("app/report.py", "@registry.|register", K.ATTRIBUTE, "app/registry.py"),
    ("app/report.py", "list[geometry.|Point]", K.TYPE, "app/geometry.py"),
    ("app/report.py", "-> geometry.|Point", K.TYPE, "app/geometry.py"),
    ("app/report.py", "first = geometry.|Point(1, 2)", K.CONSTRUCTOR, "app/geometry.py"),
    ("app/report.py", "geometry.|distance(", K.MEMBER, "app/geometry.py"),
    ("app/report.py", "class Layer(geometry.|Point)", K.HERITAGE, "app/geometry.py"),
])
def test_kind_and_released_cursor(kinds, file, marked, kind, defining):
    snap, result = kinds
    line, col = _at(snap.root, file, marked)
    refs = {(r.file, r.line, r.column): r for r in result.refs}
    ref = refs.get((file, line, col))
    assert ref is not None, sorted(refs)
    assert (ref.kind, ref.defining_file) == (kind, defining)
    text = (snap.root / file).read_text().split("\n")[line]
    assert text[col:].startswith(ref.symbol)


def test_inherited_definitions_are_the_declarations(kinds):
    snap, result = kinds
    by_symbol = {r.symbol: r for r in result.refs if r.kind is K.INHERITED_MEMBER}
    base = (snap.root / "app/base_panel.py").read_text().split("\n")
    splitter = by_symbol["splitter"].definition
    assert (splitter.file, base[splitter.start_line].strip()) == ("app/base_panel.py",
                                                                 "self.splitter = QSplitter(self)")
    refresh = by_symbol["refresh"].definition
    assert base[refresh.start_line].strip() == "def refresh(self):" and refresh.end_line == refresh.start_line + 1
    units = next(r for r in result.refs if r.symbol == "units").definition
    assert (units.file, units.start_line, units.end_line) == ("app/units.py", 0, 1)


def test_the_scan_keeps_to_the_class_and_the_repository(kinds):
    _, result = kinds
    scanned = [r for r in result.refs if r.file == "app/tool_panel.py" and r.kind is K.INHERITED_MEMBER]
    # not Nested.go's self.splitter (another self), not the class's own frame_width, not QFrame's setFrameStyle
    assert sorted(r.symbol for r in scanned) == ["origin", "refresh", "splitter"]
    assert all(r.definition is not None and r.definition.file == "app/base_panel.py" for r in scanned)


def test_outside_the_repository_is_never_a_candidate(kinds):
    snap, result = kinds
    symbols = {r.symbol for r in result.refs}
    # Graph is collections.OrderedDict re-exported by app/common.py; Local's only base is dict; no repository
    # class declares layout(), only BasePanel's Qt base (zxlive's ``self.layout()``, ``anim.setEndValue``: the
    # released benchmark kept such uses, the annotation protocol calls them third-party)
    assert not symbols & {"move_to_end", "missing_member", "Counter", "OrderedDict", "layout",
                           "setEndValue"}
    assert not any(r.file == r.defining_file for r in result.refs)
    lost = [e for e in result.exclusions if e.stage is Stage.ANALYZER]
    for name in ("move_to_end", "layout", "setEndValue"):  # recorded, not silently dropped
        assert any(repr(name) in e.detail and e.reason is Reason.SYMBOL_NOT_IN_REPOSITORY for e in lost), name
    assert {r.kind for r in result.refs} >= {K.MEMBER, K.INHERITED_MEMBER, K.MODULE_MEMBER, K.TYPE, K.ATTRIBUTE,
                                             K.CONSTRUCTOR, K.HERITAGE}


def test_namespace_packages_resolve(tmp_path):
    snap, result = _analyze("namespace", tmp_path)
    got = {(r.symbol, r.defining_file, r.kind) for r in result.refs}
    assert ("load_config", "nsapp/core/config.py", K.MEMBER) in got  # from nsapp.core import config
    assert ("start", "nsapp/core/engine.py", K.MEMBER) in got  # from nsapp.core.engine import Engine
    assert ("Engine", "nsapp/core/engine.py", K.CONSTRUCTOR) in got  # import nsapp.core.engine
    assert ("discover", "nsapp/plugins/loader.py", K.MEMBER) in got  # a regular package inside a namespace
    for r in result.refs:
        line = (snap.root / r.file).read_text().split("\n")[r.line]
        assert line[r.column:].startswith(r.symbol)


def test_module_index_names_namespace_packages():
    files = [SourceFile(p, "") for p in ("a/b/c.py", "src/pkg/__init__.py", "src/pkg/mod.py", "top.py",
                                          "my-dir/x.py")]
    index = ModuleIndex(files)
    assert index.file_for("a.b.c", "") == "a/b/c.py" and index.file_for("b.c", "") == "a/b/c.py"
    assert index.is_project("a") and index.is_project("a.b") and not index.is_module("a.b")
    assert index.file_for("src.pkg.mod", "") == "src/pkg/mod.py" and index.file_for("pkg.mod", "")
    assert index.module_of["a/b/c.py"] == "c"  # relative imports keep their package
    assert not index.is_project("my-dir")  # not an identifier: never importable
    assert not index.is_project("requests")


def test_hostile_class_graphs_cost_one_walk():
    """Cycles and fan-outs of bases, within a file and across files, end; each class is visited once."""
    from benchsmith.analyzers.python.kinds import find_member, stubbed_base

    names = [f"C{i}" for i in range(40)]
    fan = "".join(f"class {n}({', '.join(m for m in names if m != n)}):\n    pass\n" for n in names)
    fan += "class Last(C3, A):\n    pass\n"
    files = [SourceFile("p/__init__.py", ""), SourceFile("p/fan.py", "from .a import A\n" + fan),
             SourceFile("p/a.py", "from .b import B\n\nclass A(B):\n    pass\n"),
             SourceFile("p/b.py", "from .a import A\n\nclass B(A):\n    pass\n")]
    index = ModuleIndex(files)
    assert stubbed_base(index, "p/fan.py", "C0", {"A"}) is None
    assert stubbed_base(index, "p/fan.py", "Last", {"A"}) == "A"  # after walking every C once
    assert find_member(index, "p/a.py", "A", "nowhere") is None  # A -> B -> A ..., all in the repository
    assert find_member(index, "p/fan.py", "C0", "nowhere") is None
    assert find_member(index, "p/fan.py", "Last", "nowhere") is None
