"""C# analyzer and the full build on real code not written by us: pythonnet's C# runtime from its PyPI sdists, with
the real mcs.  2.5.2 is written for C# 7 (mcs reads nearly all of it); 3.2.1 uses C# 9+ (mcs reads little of it,
which must show up as recorded ``toolchain_cannot_parse`` exclusions, not as silence)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers import get_analyzer
from benchsmith.analyzers.csharp import Compiler
from benchsmith.cli import main
from benchsmith.files import snapshot
from benchsmith.records import Reason
from benchsmith.sources import extract_archive  # the builder's own safe extraction
from tests.invariants import check_split

pytestmark = pytest.mark.skipif(shutil.which("mcs") is None,
                                reason="mcs not on PATH (apt-get install mono-mcs; scripts/setup_toolchains.sh)")

PYTHONNET_OLD = ("pypi", "pythonnet==2.5.2", "pythonnet-2.5.2.tar.gz")
PYTHONNET_NEW = ("pypi", "pythonnet==3.2.1", "pythonnet-3.2.1.tar.gz")


@pytest.fixture(scope="module")
def old(download, tmp_path_factory):
    return extract_archive(download(*PYTHONNET_OLD), tmp_path_factory.mktemp("pn-old"))


def _analyzer():
    a = get_analyzer("csharp")
    a.compiler = Compiler.MCS
    return a


def _run(root: Path, tmp: Path):
    analyzer = _analyzer()
    snap = snapshot(root, analyzer.extensions, tmp / "snap", repo_name=root.name)
    return snap, analyzer.analyze(snap, tmp / "work")


def test_pythonnet_runtime_refs(old, tmp_path):
    snap, res = _run(old / "src", tmp_path / "a")
    assert not [e for e in res.exclusions if e.item_id == "src"], res.exclusions
    assert len(res.refs) >= 300, res.stats
    assert {r.diagnostic for r in res.refs} >= {"CS0117", "CS1061", "CS1729"}
    texts = snap.by_path()
    for r in res.refs:
        assert texts[r.file].text.split("\n")[r.line][r.column:].startswith(r.symbol), r
        assert r.defining_file and r.defining_file != r.file, r
        definition = texts[r.defining_file].text
        assert re.search(rf"\b{re.escape(r.symbol)}\b", definition) or \
            re.search(rf"\b{re.escape(r.import_name)}\b", definition), r
    # NUnit, BenchmarkDotNet... are missing: mcs needs the shim to reach method bodies at all.
    assert res.stats["shim_entries"] > 0
    _, again = _run(old / "src", tmp_path / "b")
    assert [r.to_dict() for r in res.refs] == [r.to_dict() for r in again.refs]
    # The speed work (side-by-side compiles, predicted placeholders and stub blockers) loses no reference of
    # the plain step-by-step run.
    reference = _analyzer()
    reference.parallel, reference.predict = 1, False
    plain = reference.analyze(snapshot(old / "src", reference.extensions, tmp_path / "c" / "snap",
                                       repo_name="src"), tmp_path / "c" / "work")
    key = lambda r: (r.file, r.line, r.column, r.symbol, r.defining_file)  # noqa: E731
    assert {key(r) for r in res.refs} >= {key(r) for r in plain.refs}
    assert res.stats["shim_rounds"] <= plain.stats["shim_rounds"]


def test_modern_csharp_is_recorded_as_unparsable(download, tmp_path):
    root = extract_archive(download(*PYTHONNET_NEW), tmp_path / "src")
    _, res = _run(root / "src" / "runtime", tmp_path / "run")
    cannot = [e for e in res.exclusions if e.reason is Reason.TOOLCHAIN_CANNOT_PARSE]
    assert len(cannot) >= 50, res.exclusions[:5]
    assert all(e.detail.startswith("mcs line") for e in cannot)
    assert res.stats["compiled_files"] + res.stats["unparsed_files"] == res.stats["files"]


def test_full_build_through_the_cli(old, download, tmp_path):
    out = tmp_path / "out"
    rc = main(["build", "cceval", "--lang", "csharp", "--repo", str(download(*PYTHONNET_OLD)), "--output", str(out),
               "--retrievers", "none", "--no-card", "-q"])
    assert rc == 0
    examples = check_split(out / "csharp" / "line_completion.jsonl", {"pythonnet-2.5.2": old})
    assert len(examples) >= 50
