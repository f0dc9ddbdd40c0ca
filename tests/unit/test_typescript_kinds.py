"""Reference kinds of the TypeScript analyzer (issue 27) on tests/fixtures/typescript/kinds with the real pinned tsc.

The fixture is shaped like the released code (chiatcg-server, gptnotes): parameters typed with a namespace member
(``data: Game.IGameData``), ``class extends`` a project class, ``new ns.Thing()``, a decorator, a JSX component of
another file, the keys of an object literal typed with a project interface, a function reached through a re-exporting index, and a file tree-sitter-typescript rejects although
tsc accepts it (mobx 6.13.5's generic call signatures without ``;`` and a parameter named ``any``).  Negative
controls: a type of a package (``EventEmitter`` from 'events') and of lib.d.ts (``Date``), and an import shadowed by
a parameter.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers.typescript import TypeScriptAnalyzer
from benchsmith.analyzers.typescript.kinds import classify
from benchsmith.analyzers.typescript.uses import SCAN_DIAGNOSTIC
from benchsmith.files import snapshot
from benchsmith.records import ReferenceKind as K
from tests.typescript_support import ref_at, require_tsc

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "typescript" / "kinds"


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    analyzer = TypeScriptAnalyzer()
    require_tsc(analyzer.tsc_path())
    base = tmp_path_factory.mktemp("kinds")
    repo = base / "repo"
    shutil.copytree(FIXTURE, repo)
    snap = snapshot(repo, analyzer.extensions, base / "snap", repo_name="kinds")
    result = analyzer.analyze(snap, base / "work")
    return result, {f.path: f.text.splitlines() for f in snap.files}


_at = ref_at


@pytest.mark.parametrize("file,line,symbol,kind,defining", [
    ("src/app.ts", 6, "Base", K.HERITAGE, "src/models.ts"),  # class Player extends Base
    ("src/app.ts", 6, "IPlayer", K.HERITAGE, "src/models.ts"),  # implements models.IPlayer (TS2694 at IPlayer)
    ("src/app.ts", 7, "Tracked", K.ATTRIBUTE, "src/models.ts"),  # @Tracked
    ("src/app.ts", 8, "ICard", K.TYPE, "src/models.ts"),  # card: ICard;
    ("src/app.ts", 9, "IGameData", K.TYPE, "src/models.ts"),  # run(data: Game.IGameData)
    ("src/app.ts", 10, "enemies", K.MEMBER, "src/models.ts"),  # data.enemies: a member of the parameter's type
    ("src/app.ts", 11, "Thing", K.CONSTRUCTOR, "src/models.ts"),  # new models.Thing()
    ("src/app.ts", 12, "Engine", K.CONSTRUCTOR, "src/models.ts"),  # new Game.Engine()
    ("src/app.ts", 13, "Base", K.TYPE, "src/models.ts"),  # instanceof Base
    ("src/app.ts", 14, "helperFn", K.MODULE_MEMBER, "src/helpers.ts"),  # re-exported by index.ts
    ("src/app.ts", 14, "turn", K.MEMBER, "src/models.ts"),
    ("src/app.ts", 16, "helper", K.INHERITED_MEMBER, "src/models.ts"),  # this.helper() of the base class
    ("src/app.ts", 24, "ICard", K.TYPE, "src/models.ts"),  # after the shadowing function: the import again
    ("src/view.tsx", 3, "Button", K.JSX, "src/ui.tsx"),  # <Button label="ok" />
    ("src/store.ts", 4, "size", K.MEMBER, "src/models.ts"),  # a key of `const store: IStore = {...}`
    ("src/store.ts", 5, "load", K.MEMBER, "src/models.ts"),  # a method of that object literal
    ("src/store.ts", 9, "inner", K.MEMBER, "src/models.ts"),
    ("src/store.ts", 9, "depth", K.MEMBER, "src/models.ts"),  # a nested literal: IStore.inner is an IInner
    ("src/store.ts", 12, "turn", K.MEMBER, "src/models.ts"),  # {...} as Game.IGameData
    ("src/store.ts", 12, "enemies", K.MEMBER, "src/models.ts"),
    ("src/store.ts", 15, "depth", K.MEMBER, "src/models.ts"),  # s.inner.depth: along the chain of declared types
    ("src/store.ts", 20, "size", K.MEMBER, "src/models.ts"),  # const made = makeStore(): its declared return type
    ("src/app.ts", 16, "size", K.MEMBER, "src/models.ts"),  # const thing = new models.Thing()
    ("src/app.ts", 34, "turn", K.MEMBER, "src/models.ts"),  # this.game.turn, `private game: Game.IGameData`
    ("src/holder.d.ts", 4, "ICard", K.TYPE, "src/models.ts"),  # a declaration file's type uses are code too
])
def test_each_kind_at_its_name(analysed, file, line, symbol, kind, defining):
    result, lines = analysed
    ref = _at(result, file, line, symbol)
    assert ref is not None, f"no reference {symbol!r} on {file}:{line}: " \
        f"{[(r.symbol, r.kind) for r in result.refs if r.file == file and r.line == line - 1]}"
    assert (ref.kind, ref.defining_file) == (kind, defining)
    assert lines[file][line - 1][ref.column:].startswith(symbol)  # the cursor goes right before the name


def test_every_reference_has_a_kind_and_the_stats_count_them(analysed):
    result, _ = analysed
    assert all(isinstance(r.kind, K) for r in result.refs)
    counted = result.stats["reference_kinds"]
    assert sum(counted.values()) == len(result.refs)
    assert set(counted) >= {k.value for k in K}  # every kind occurs in the fixture
    assert result.stats["binding_scan_refs"] == sum(r.diagnostic == SCAN_DIAGNOSTIC for r in result.refs)


def test_package_and_lib_types_are_never_candidates(analysed):
    result, lines = analysed
    symbols = {r.symbol for r in result.refs}
    assert not symbols & {"EventEmitter", "Date", "events"}
    app = lines["src/app.ts"]
    external = {i for i, text in enumerate(app) if "EventEmitter" in text or "Date" in text}
    assert len(external) == 3  # the import and the two declarations
    assert not [r for r in result.refs if r.file == "src/app.ts" and r.line in external]
    assert all(r.defining_file and r.defining_file != r.file for r in result.refs)


def test_an_import_passed_on_by_export_is_not_a_reference(analysed):
    result, _ = analysed
    assert not [r for r in result.refs if r.file == "src/index.ts"]  # `export { Thing };` of an import


def test_an_import_shadowed_by_a_parameter_is_not_a_reference(analysed):
    result, _ = analysed
    assert _at(result, "src/app.ts", 21, "ICard") is None  # `return ICard + 1;`: the number parameter


def test_an_object_literal_key_the_type_does_not_declare_is_not_a_reference(analysed):
    result, _ = analysed
    assert _at(result, "src/store.ts", 8, "extra") is None  # `extra: 2` is no member of IStore
    assert _at(result, "src/store.ts", 15, "toFixed") is None  # nor is toFixed one of IInner


def test_a_file_the_grammar_rejects_is_still_analysed(analysed):
    """factory.ts has the shapes tree-sitter-typescript rejects in mobx 6.13.5 (src/api/observable.ts: call
    signatures without `;`; src/mobx.ts: `(any) => void`); tsc accepts it, so it is compiled, stubbed and its
    references kept (the cutter drops those it cannot cut exactly)."""
    result, lines = analysed
    text = "\n".join(lines["src/factory.ts"]) + "\n"
    assert TypeScriptAnalyzer.parser_for("src/factory.ts").parse(text.encode()).root_node.has_error
    assert not [e for e in result.exclusions if e.item_id.endswith("factory.ts")]
    assert result.stats["unparsable_files"] == 1
    assert _at(result, "src/factory.ts", 11, "id").diagnostic == "TS2339"  # tsc ran on the stubbed file
    assert _at(result, "src/factory.ts", 10, "ICard").kind is K.TYPE


@pytest.mark.parametrize("source,name,kind", [
    ("let x: A;", "A", K.TYPE),
    ("f<A>();", "A", K.TYPE),
    ("const y = x as A;", "A", K.TYPE),
    ("type T = typeof A;", "A", K.TYPE),
    ("const t = typeof A;", "A", K.TYPE),
    ("class C extends A<B> {}", "A", K.HERITAGE),
    ("class C extends A<B> {}", "B", K.TYPE),  # a type argument of the base is a type
    ("interface I extends A {}", "A", K.HERITAGE),
    ("class C implements ns.A {}", "A", K.HERITAGE),
    ("new a.b.A();", "A", K.CONSTRUCTOR),
    ("new a.b.A();", "b", K.CONSTRUCTOR),
    ("class C { @A() m() {} }", "A", K.ATTRIBUTE),
    ("class C { m() { this.A(); } }", "A", K.INHERITED_MEMBER),
    ("x.A();", "A", K.MEMBER),
    ("A(1);", "A", K.MEMBER),
])
def test_classify_by_place(source, name, kind):
    tree = TypeScriptAnalyzer.parser_for("a.ts").parse(source.encode())
    at = source.rindex(name) if name != "A" or source.count(name) == 1 else source.index(name)
    node = tree.root_node.descendant_for_byte_range(at, at + len(name))
    assert classify(node) is kind


def test_classify_jsx_and_module_members():
    src = b"const v = <ns.Comp a={1} />; ns.run();"
    tree = TypeScriptAnalyzer.parser_for("a.tsx").parse(src)
    comp = src.index(b"Comp")
    assert classify(tree.root_node.descendant_for_byte_range(comp, comp + 4)) is K.JSX
    run = src.index(b"run")
    node = tree.root_node.descendant_for_byte_range(run, run + 3)
    assert classify(node, namespace_object=True) is K.MODULE_MEMBER
    assert classify(node) is K.MEMBER
