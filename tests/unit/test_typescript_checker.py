"""The type checker's references (issue 27): the original compile through analyzers/typescript/checker.js, with the
real pinned TypeScript, on a small project written here.

What only the checker sees: members reached through a value whose type is inferred from a project type of another
file (``card.scripts`` after ``const card = getDeps().sourceCard``), an unannotated callback parameter typed by a
contextual project signature, a chain through a namespace member (``new Ruleset.cardMods.power()``), a name
imported from a JavaScript module (``~/env.mjs``, a companion), a destructured property, a JSX attribute of a
project component.  Negative controls: a lib member (``[].map``, ``.find``, ``<div id>``), a member declared in the
same file, and a JavaScript module nothing imports.
"""

from __future__ import annotations

import json

import pytest

from benchsmith.analyzers.typescript import TypeScriptAnalyzer
from benchsmith.analyzers.typescript.checker import CHECKER_DIAGNOSTIC, SENTINEL, parse_output
from benchsmith.files import snapshot
from benchsmith.records import ReferenceKind as K
from tests.typescript_support import ref_at, require_tsc

MODELS = """\
export interface Card { scripts: string[]; mods: Mod[] }
export interface Mod { name: string }
export interface Deps { sourceCard: Card }
export type Part = (engine: Card, target: Mod) => void;
export namespace Ruleset {
    export const cardMods = { power: class Power { serialize() { return 1; } } };
}
"""
DEPS = """\
import { Deps } from './models';
export function getDeps(): Deps { return { sourceCard: { scripts: [], mods: [] } }; }
"""
USE = """\
import { getDeps } from './deps';
import { Ruleset, Part } from './models';
import { env } from '~/env.mjs';
const card = getDeps().sourceCard;
const found = card.scripts.find(x => x === 'a');
const doubled = [1, 2].map(x => x * 2);
const local = { own: 1 };
const own = local.own;
const parts: Part[] = [(engine, target) => { engine.mods.length; }];
const power = new Ruleset.cardMods.power().serialize();
const host = env.HOST;
const { sourceCard } = getDeps();
"""
COMP = """\
export interface Props { title: string }
export function Comp(props: Props) { return null as any; }
"""
PAGE = """\
import { Comp } from './comp';
export const el = <Comp title="x" />;
export const d = <div id="a" />;
"""
FILES = {
    "src/models.ts": MODELS, "src/deps.ts": DEPS, "src/use.ts": USE, "src/comp.tsx": COMP, "src/page.tsx": PAGE,
    "src/env.mjs": "export const env = { HOST: 'localhost' };\n",
    "src/unused.js": "export const nobody = 1;\n",
    # a tRPC-like client: `api`'s members are the router's keys, reached through an inferred type
    "src/router.ts": "export const appRouter = {\n    character: { setActive: (id: number) => id },\n};\n",
    "src/api.ts": "import { appRouter } from './router';\n"
                  "function wrap<T>(x: T): T { return x; }\nexport const api = wrap(appRouter);\n",
    "src/client.ts": "import { api } from './api';\nexport const picked = api.character.setActive(1);\n",
    "tsconfig.json": json.dumps({"compilerOptions": {"baseUrl": ".", "paths": {"~/*": ["./src/*"]}}}),
}


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    analyzer = TypeScriptAnalyzer()
    require_tsc(analyzer.tsc_path())
    base = tmp_path_factory.mktemp("checker")
    repo = base / "repo"
    for path, text in FILES.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    results = []
    for run in range(2):
        snap = snapshot(repo, analyzer.extensions, base / f"snap{run}", repo_name="checker")
        snap.configs = analyzer.read_configs(repo)
        results.append(analyzer.analyze(snap, base / f"work{run}"))
    return results


def _at(result, line1: int, symbol: str, file: str = "src/use.ts"):
    return ref_at(result, file, line1, symbol)


def test_member_through_an_inferred_type_is_a_reference_with_its_definition(analysed):
    result = analysed[0]
    assert not result.exclusions, result.exclusions
    ref = _at(result, 5, "scripts")  # card.scripts: card's type (Card) is inferred, never written in use.ts
    assert ref is not None and ref.diagnostic == CHECKER_DIAGNOSTIC
    assert (ref.kind, ref.defining_file, ref.import_name) == (K.MEMBER, "src/models.ts", "Card")
    assert ref.definition is not None
    assert (ref.definition.file, ref.definition.start_line, ref.definition.end_line) == ("src/models.ts", 0, 0)
    assert USE.split("\n")[ref.line][ref.column:].startswith("scripts.find")
    sc = _at(result, 4, "sourceCard")  # getDeps().sourceCard: Deps is declared in models.ts, not deps.ts
    assert sc is not None and sc.defining_file == "src/models.ts" and sc.definition.start_line == 2


def test_lib_and_same_file_members_are_not_references(analysed):
    result = analysed[0]
    assert _at(result, 5, "find") is None  # Array.prototype.find of lib.d.ts
    assert _at(result, 6, "map") is None
    assert _at(result, 8, "own") is None  # declared in use.ts itself
    assert _at(result, 5, "x") is None  # a callback parameter typed by lib's find
    assert not [r for r in result.refs if r.defining_file == r.file]


def test_contextual_callback_parameters_and_member_chains(analysed):
    result = analysed[0]
    engine = _at(result, 9, "engine")  # (engine, target) => ... typed by Part of models.ts
    assert engine is not None and engine.defining_file == "src/models.ts" and engine.definition.start_line == 3
    assert _at(result, 9, "mods").kind is K.MEMBER  # engine.mods: a member of the contextual parameter's type
    power = _at(result, 10, "power")
    assert power is not None and power.kind is K.CONSTRUCTOR and power.defining_file == "src/models.ts"
    assert _at(result, 10, "Ruleset") is None  # one reference per dotted name: at its members
    assert _at(result, 10, "serialize").kind is K.MEMBER


def test_destructured_properties_and_jsx_attributes(analysed):
    result = analysed[0]
    sc = _at(result, 12, "sourceCard")  # const { sourceCard } = getDeps(): the key is a property of Deps
    assert sc is not None and sc.defining_file == "src/models.ts" and sc.definition.start_line == 2
    title = _at(result, 2, "title", "src/page.tsx")  # <Comp title=...>: a property of Comp's props
    assert title is not None and title.defining_file == "src/comp.tsx" and title.import_name == "Props"
    assert _at(result, 3, "id", "src/page.tsx") is None  # <div id>: lib.dom's


def test_javascript_module_a_source_imports_is_a_project_module(analysed):
    result = analysed[0]
    host = _at(result, 11, "HOST")  # the stub diff now sees the import: TS2339 on the stubbed `env`
    assert host is not None and host.defining_file == "src/env.mjs"
    assert _at(result, 11, "env") is None  # one reference per dotted name: at its project member
    assert result.stats["javascript_companions"] == 1  # unused.js: imported by nobody, never compiled
    assert result.stats["files"] == 8
    assert not [r for r in result.refs if not r.file.endswith((".ts", ".tsx"))]  # a companion is never a place


def test_references_are_deterministic(analysed):
    first, second = analysed
    assert [r.to_dict() for r in first.refs] == [r.to_dict() for r in second.refs]


def test_output_without_its_final_record_is_incomplete():
    tree = "/t"
    ref = {"file": "/t/a.ts", "line": 0, "character": 4, "name": "m", "owner": "C", "decl_file": "/t/b.ts",
           "start": [1, 0], "end": [1, 9]}
    diag = "a.ts(1,1): error TS2339: Property 'x' does not exist on type 'C'.\n"
    cut = parse_output(f"{diag}{SENTINEL}\n{json.dumps(ref)}\n", tree)
    assert not cut.complete and cut.diagnostics == diag
    whole = parse_output(f"{SENTINEL}\n{json.dumps(ref)}\n" + json.dumps({"done": True, "capped": ["/t/a.ts"]}) + "\n",
                         tree)
    assert whole.complete and whole.diagnostics == "" and whole.capped == ["a.ts"]
    assert [(r.file, r.decl_file, r.start) for r in whole.refs] == [("a.ts", "b.ts", (1, 0))]


def test_a_reference_the_stub_diff_gives_takes_its_definition_from_the_checker(analysed):
    """``api.character``: the stub diff finds the use (``api`` is an import), but ``character`` is declared in the
    router module, not in the imported file; the checker's declaration is its definition."""
    ref = _at(analysed[0], 2, "character", "src/client.ts")
    assert ref is not None and ref.diagnostic != CHECKER_DIAGNOSTIC and ref.defining_file == "src/api.ts"
    assert ref.definition is not None and ref.definition.file == "src/router.ts" and ref.definition.start_line == 1
