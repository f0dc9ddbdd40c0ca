"""Java analyzer and the full build on real code not written by us: react-native Android modules from npm and
JPype's Java sources from its PyPI sdist, with the real javac."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers import get_analyzer
from benchsmith.cli import main
from benchsmith.files import snapshot
from benchsmith.sources import extract_archive  # the builder's own safe extraction
from tests.invariants import check_split

pytestmark = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                                reason="javac/java not on PATH (run scripts/setup_toolchains.sh)")

DEVICE_INFO = ("npm", "react-native-device-info@15.0.2", "react-native-device-info-15.0.2.tgz")
NETINFO = ("npm", "@react-native-community/netinfo@12.0.1", "react-native-community-netinfo-12.0.1.tgz")
JPYPE = ("pypi", "JPype1==1.7.1", "jpype1-1.7.1.tar.gz")


@pytest.fixture(scope="module")
def sources(download, tmp_path_factory):
    base = tmp_path_factory.mktemp("java-real")
    return {name: (spec[2], extract_archive(download(*spec), base / name))
            for name, spec in (("device_info", DEVICE_INFO), ("netinfo", NETINFO), ("jpype", JPYPE))}


def _declares(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def _check_refs(root: Path, tmp: Path, min_refs: int):
    analyzer = get_analyzer("java")
    snap = snapshot(root, analyzer.extensions, tmp / "snap", repo_name=root.name)
    res = analyzer.analyze(snap, tmp / "work")
    assert not [e for e in res.exclusions if e.item_id == root.name], res.exclusions  # no repository-level failure
    assert len(res.refs) >= min_refs, res.stats
    texts = snap.by_path()
    for r in res.refs:
        line = texts[r.file].text.split("\n")[r.line]
        assert line[r.column:].startswith(r.symbol), r
        assert r.defining_file and r.defining_file != r.file, r
        definition = texts[r.defining_file].text
        assert _declares(definition, r.symbol) or _declares(definition, r.import_name), r
    return res


def test_react_native_modules(sources, tmp_path):
    for name in ("device_info", "netinfo"):
        _, root = sources[name]
        res = _check_refs(root / "android", tmp_path / name, min_refs=10)
        # Android SDK and React Native are missing: the original run has hundreds of errors, the diff removes them.
        assert res.stats["original_errors"] > 100
        assert {r.diagnostic for r in res.refs} >= {"compiler.err.cant.resolve.location.args"}


def test_jpype_sources_and_determinism(sources, tmp_path):
    _, root = sources["jpype"]
    a = _check_refs(root, tmp_path / "a", min_refs=200)
    assert any(r.diagnostic.startswith("compiler.err.cant.apply") for r in a.refs)  # constructor mismatches too
    b = _check_refs(root, tmp_path / "b", min_refs=200)
    assert [r.to_dict() for r in a.refs] == [r.to_dict() for r in b.refs]


def test_full_build_through_the_cli(sources, download, tmp_path):
    archive = download(*DEVICE_INFO)
    _, root = sources["device_info"]
    out = tmp_path / "out"
    rc = main(["build", "cceval", "--lang", "java", "--repo", str(archive), "--repo", str(download(*NETINFO)),
               "--output", str(out), "--retrievers", "none", "--no-card", "-q"])
    assert rc == 0
    examples = check_split(out / "java" / "line_completion.jsonl",
                           {"react-native-device-info-15.0.2": root,
                            "react-native-community-netinfo-12.0.1": sources["netinfo"][1]})
    assert len(examples) >= 5
    assert {e["metadata"]["repository"] for e in examples} == {"react-native-device-info-15.0.2",
                                                               "react-native-community-netinfo-12.0.1"}


def test_released_cursor_on_real_code(sources, download, tmp_path):
    """--cursor released on real code: the same references as --cursor name, each groundtruth ending where the
    name build's does, the cursor earlier on the same line; the draw is seeded (same seed, same bytes)."""
    archive = str(download(*NETINFO))
    roots = {"react-native-community-netinfo-12.0.1": sources["netinfo"][1]}
    splits = {}
    for rule, seed in (("name", "0"), ("released", "0"), ("released", "0"), ("released", "1")):
        out = tmp_path / f"{rule}-{seed}-{len(splits)}"
        assert main(["build", "cceval", "--lang", "java", "--repo", archive, "--output", str(out), "--retrievers",
                     "none", "--no-card", "-q", "--screens", "none", "--cursor", rule, "--seed", seed]) == 0
        splits[len(splits)] = (out / "java" / "line_completion.jsonl")
    by_name = {e["metadata"]["task_id"]: e for e in check_split(splits[0], roots)}
    released = check_split(splits[1], roots)
    assert splits[1].read_bytes() == splits[2].read_bytes() != splits[3].read_bytes()
    places = {e["metadata"]["cursor_place"] for e in released}
    assert {"line_start", "elsewhere"} <= places
    moved = 0
    for e in released:
        a = by_name.get(e["metadata"]["task_id"])
        if a is None:
            continue  # a filter (duplicate groundtruth, length) can judge the longer groundtruth differently
        assert len(e["prompt"]) + len(e["groundtruth"]) == len(a["prompt"]) + len(a["groundtruth"])
        moved += len(e["prompt"]) < len(a["prompt"])
    assert moved >= len(released) // 4  # a type that starts its line has no earlier place
