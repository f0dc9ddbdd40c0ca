"""TypeScript end to end on real code not written by us: the sources rxjs ships in its npm tarball (251 files
under package/src, relative imports, classes extending imported classes, generic types)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchsmith.analyzers.typescript import TypeScriptAnalyzer
from benchsmith.cli import main
from benchsmith.files import snapshot
from benchsmith.records import Reason
from benchsmith.sources import extract_archive
from tests.invariants import CCEVAL_KEYS, CCEVAL_META, check_self_consistency, load
from tests.typescript_support import require_tsc

pytestmark = pytest.mark.slow

TARBALL = ("rxjs@7.8.2", "rxjs-7.8.2.tgz")


@pytest.fixture(scope="module")
def rxjs_src(download, tmp_path_factory) -> Path:
    require_tsc(TypeScriptAnalyzer().tsc_path())
    archive = download("npm", *TARBALL)
    root = extract_archive(archive, tmp_path_factory.mktemp("rxjs"))
    src = Path(root) / "src" if (Path(root) / "src").is_dir() else Path(root) / "package" / "src"
    assert len(list(src.rglob("*.ts"))) > 200
    return src


_DECL = r"(?:class|interface|type|enum|function\*?|const|let|var|namespace|module)\s+{n}\b"
_MEMBER = r"^[ \t]*(?:(?:public|private|protected|static|readonly|abstract|async|get|set|override|declare)\s+)*" \
          r"\*?{n}[ \t]*[?!]?[ \t]*[(<:=;,]"
_PARAM_PROPERTY = r"\b(?:public|private|protected|readonly)\s+{n}\b"
# a signature's parameter (`onError?: (err: any) => void`, what a contextually typed `(err) =>` stands for) or a
# member of a one-line type literal (`{ id: string; name: string }`)
_TYPED_NAME = r"[(,{{;][ \t]*{n}[ \t]*\??[ \t]*:"


def _declares(text: str, name: str) -> bool:
    n = re.escape(name)
    return any(re.search(p.format(n=n), text, re.M) for p in (_DECL, _MEMBER, _PARAM_PROPERTY, _TYPED_NAME))


def _imported_name(text: str, local: str) -> str:
    """``import { refCount as higherOrderRefCount }``: the exported name behind a local alias."""
    m = re.search(rf"\b([\w$]+)\s+as\s+{re.escape(local)}\b", text)
    return m.group(1) if m else local


def _names(ref_file_text: str, symbol: str, import_name: str) -> set[str]:
    return {symbol, import_name, _imported_name(ref_file_text, symbol), _imported_name(ref_file_text, import_name)}


def test_rxjs_references(rxjs_src, tmp_path):
    analyzer = TypeScriptAnalyzer()
    runs = []
    for i in range(2):
        snap = snapshot(rxjs_src, analyzer.extensions, tmp_path / f"snap{i}", repo_name="rxjs")
        snap.configs = analyzer.read_configs(rxjs_src)
        result = analyzer.analyze(snap, tmp_path / f"work{i}")
        runs.append(result)
    first, second = runs
    assert not [e for e in first.exclusions if e.item_id == "rxjs"], first.exclusions
    assert first.tool_versions.get("typescript") == "5.6.3"
    assert len(first.refs) >= 500, first.stats
    # deterministic: same refs, same stats
    assert [r.to_dict() for r in first.refs] == [r.to_dict() for r in second.refs]
    assert first.stats == second.stats

    texts = {f.path: f.text for f in snap.files}
    codes = set()
    for r in first.refs:
        text = texts[r.file]
        offset = sum(len(line) + 1 for line in text.split("\n")[: r.line]) + r.column
        assert text[offset:].startswith(r.symbol), r
        assert r.defining_file != r.file and r.defining_file in texts, r
        names = _names(text, r.symbol, r.import_name)
        assert any(_declares(texts[r.defining_file], n) for n in names), r
        codes.add(r.diagnostic)
    # members of imported classes, calls of imported functions, generic types, constructor arity all show up
    assert {"TS2339", "TS2348", "TS2315", "TS2554"} <= codes
    # inherited members reach the file declaring the base class (AsyncSubject extends Subject)
    inherited = [r for r in first.refs if r.file == "internal/AsyncSubject.ts" and r.symbol == "hasError"]
    assert inherited and inherited[0].defining_file == "internal/Subject.ts"


def test_rxjs_build_through_cli(rxjs_src, tmp_path):
    out = tmp_path / "out"
    rc = main(["build", "cceval", "--lang", "typescript", "--repo", str(rxjs_src), "--output", str(out),
               "--retrievers", "none", "--no-card", "-q", "--workers", "1"])
    assert rc == 0
    examples = load(out / "typescript" / "line_completion.jsonl")
    assert len(examples) >= 200
    ids = [e["metadata"]["task_id"] for e in examples]
    assert len(ids) == len(set(ids))
    check_self_consistency(examples)
    for ex in examples:
        assert list(ex)[:4] == CCEVAL_KEYS
        meta = ex["metadata"]
        assert all(k in meta for k in CCEVAL_META)
        assert meta["language"] == "typescript"
        text = (rxjs_src / meta["file"]).read_text(encoding="utf-8")
        assert ex["prompt"] + ex["groundtruth"] + ex["right_context"] == text, meta["task_id"]
        assert meta["groundtruth_start_lineno"] == ex["prompt"].count("\n")
        assert ex["groundtruth"].startswith(meta["symbol"]), meta["task_id"]
        assert meta["defining_file"] and meta["defining_file"] != meta["file"]
        definition = (rxjs_src / meta["defining_file"]).read_text(encoding="utf-8")
        # an aliased import (`refCount as higherOrderRefCount`) is declared under its exported name
        names = {meta["symbol"], _imported_name(text, meta["symbol"])}
        assert any(re.search(rf"\b{re.escape(n)}\b", definition) for n in names), meta["task_id"]
        assert 3 <= meta["groundtruth_tokens"] <= 30
    stats = json.loads((out / "typescript" / "stats.json").read_text(encoding="utf-8"))
    assert stats["examples"] == len(examples)
    assert stats["tool_versions"]["typescript"] == "5.6.3"


@pytest.mark.container
def test_container_backend_matches_local(tmp_path):
    """The same fixture analysed by tsc in the tsc.Dockerfile image and by the local pinned tsc."""
    from benchsmith.analyzers.base import AnalyzerOptions
    from benchsmith.containers import build_all, detect_engine

    engine = detect_engine()
    if engine is None:
        pytest.skip("no container engine answers (`docker info` / `podman info` failed): install docker or podman")
    tag = build_all(engine, names=["tsc"])["tsc"].tag
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "typescript" / "project"
    results = []
    for i, options in enumerate((AnalyzerOptions(backend=engine, container_image=tag), AnalyzerOptions())):
        analyzer = TypeScriptAnalyzer(options)
        snap = snapshot(fixture, analyzer.extensions, tmp_path / f"snap{i}", repo_name="fixture")
        snap.configs = analyzer.read_configs(fixture)
        results.append(analyzer.analyze(snap, tmp_path / f"work{i}"))
    in_container, local = results
    assert not [e for e in in_container.exclusions if e.item_id == "fixture"], in_container.exclusions
    assert in_container.tool_versions == {"tsc_image": tag}
    assert len(local.refs) >= 15
    assert [r.to_dict() for r in in_container.refs] == [r.to_dict() for r in local.refs]
    # an image the engine cannot find is a missing toolchain, not a crash
    analyzer = TypeScriptAnalyzer(AnalyzerOptions(backend=engine, container_image="benchsmith-tsc:no-such-tag"))
    snap = snapshot(fixture, analyzer.extensions, tmp_path / "snap-missing", repo_name="fixture")
    missing = analyzer.analyze(snap, tmp_path / "work-missing")
    assert [e.reason for e in missing.exclusions if e.item_id == "fixture"] == [Reason.TOOL_MISSING]
