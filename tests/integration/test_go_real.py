"""Go analyzer and the full build on real code not written by us: HashiCorp's HCL v1 as Debian packages it
(golang-github-hashicorp-hcl-dev installs the module's sources under /usr/share/gocode): 12 packages importing each
other (hcl/ast, hcl/parser, hcl/printer, json/scanner ...), tests included, one external test dependency
(go-spew) that the analysis never looks up."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchsmith.analyzers import get_analyzer
from benchsmith.cli import main
from benchsmith.files import snapshot
from tests.invariants import check_split

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="go not on PATH (run scripts/setup_toolchains.sh)")

PACKAGE = "golang-github-hashicorp-hcl-dev"
HCL = Path("/usr/share/gocode/src/github.com/hashicorp/hcl")


@pytest.fixture(scope="module")
def hcl() -> Path:
    if not (HCL / "go.mod").is_file():
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            pytest.skip(f"{HCL} missing and not root: `apt-get install {PACKAGE}` (scripts/setup_toolchains.sh)")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        res = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", PACKAGE],
                             capture_output=True, text=True, timeout=600, env=env)
        if res.returncode != 0:
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True, timeout=600, env=env)
            res = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", PACKAGE],
                                 capture_output=True, text=True, timeout=600, env=env)
        if res.returncode != 0 or not (HCL / "go.mod").is_file():
            pytest.skip(f"could not install {PACKAGE} (Debian mirror unreachable?): {res.stderr.strip()[-300:]}")
    assert len(list(HCL.rglob("*.go"))) > 30
    return HCL


def _declares(text: str, name: str) -> bool:
    n = re.escape(name)
    return re.search(rf"^(?:func|type|var|const)\s+{n}\b|^\t{n}\b(?:\s*[,=]|\s+\S)|^\t\w+(?:,\s*\w+)*,\s*{n}\b",
                     text, re.M) is not None


def test_hcl_references(hcl, tmp_path):
    analyzer = get_analyzer("go")
    runs = []
    for i in range(2):
        snap = snapshot(hcl, analyzer.extensions, tmp_path / f"snap{i}", repo_name="hcl")
        snap.configs = analyzer.read_configs(hcl)
        runs.append(analyzer.analyze(snap, tmp_path / f"work{i}"))
    first, second = runs
    assert [r.to_dict() for r in first.refs] == [r.to_dict() for r in second.refs]
    assert first.stats == second.stats
    assert not first.exclusions, first.exclusions
    assert first.stats["import_paths"] == "go.mod" and first.stats["packages"] >= 10
    # the missing go-spew is one failed import in both runs, not a reason to lose the package's other errors
    assert first.stats["original_errors"] <= 2
    assert len(first.refs) >= 500, first.stats
    assert first.stats["unattributed"] <= 0.02 * first.stats["new_diagnostics"], first.stats
    texts = snap.by_path()
    owners = set()
    for r in first.refs:
        line = texts[r.file].text.split("\n")[r.line]
        assert line[r.column:].startswith(r.symbol), r
        assert line[: r.column].endswith(f"{r.import_name}."), r  # `pkg.Name` with the stubbed import's name
        assert r.defining_file != r.file and _declares(texts[r.defining_file].text, r.symbol), r
        owners.add(r.import_name)
    assert {"ast", "token", "parser", "scanner"} <= owners


def test_full_build_through_the_cli(hcl, tmp_path):
    outs = []
    for i in range(2):
        out = tmp_path / f"out{i}"
        rc = main(["build", "cceval", "--lang", "go", "--repo", str(hcl), "--output", str(out), "--retrievers",
                   "none", "--no-card", "-q"])
        assert rc == 0
        outs.append(out / "go" / "line_completion.jsonl")
    examples = check_split(outs[0], {"hcl": hcl})
    assert len(examples) >= 100
    assert outs[0].read_bytes() == outs[1].read_bytes()  # deterministic
    assert {e["metadata"]["language"] for e in examples} == {"go"}
    # statements end where Go's automatic semicolons put them: a groundtruth ends on a token that ends a line
    # statement, and every line break inside it follows a token after which Go inserts no semicolon
    multi_line = 0
    for e in examples:
        gt = e["groundtruth"]
        assert re.search(r"[\w)\]}{;:\"'`]$", gt), gt
        for line in gt.split("\n")[:-1]:
            code = re.sub(r"//.*$", "", line).rstrip()
            assert code == "" or code.endswith(tuple(",([+-*/%&|^<=>!.")), gt
            multi_line += 1
    assert multi_line > 0  # multi-line calls and literals stay whole


@pytest.mark.container
def test_container_backend_reports_what_the_local_backend_reports(tmp_path):
    from benchsmith.analyzers import AnalyzerOptions
    from benchsmith.containers import build_all, detect_engine
    from benchsmith.runner import ToolchainBackend

    engine = detect_engine()
    if engine is None:
        pytest.skip("no container engine answers (`docker info` / `podman info` failed)")
    build_all(engine, names=["go"])  # nothing to do after `make images`; a broken Dockerfile fails here
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "go" / "basic"
    refs = {}
    for backend in (ToolchainBackend.LOCAL, engine):
        analyzer = get_analyzer("go", AnalyzerOptions(backend=backend))
        snap = snapshot(fixture, analyzer.extensions, tmp_path / backend.value / "snap", repo_name="basic")
        snap.configs = analyzer.read_configs(fixture)
        res = analyzer.analyze(snap, tmp_path / backend.value / "work")
        assert [e.reason.value for e in res.exclusions] == ["syntax_error"], res.exclusions
        refs[backend] = [r.to_dict() for r in res.refs]
    assert refs[ToolchainBackend.LOCAL] and refs[ToolchainBackend.LOCAL] == refs[engine]
