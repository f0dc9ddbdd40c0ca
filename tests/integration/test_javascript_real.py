"""JavaScript end to end on real code not written by us, with the pinned tsc in allowJs/checkJs mode: the npm
tarballs of axios 1.7.9 (ES modules: `import utils from './../utils.js'`, classes such as AxiosError used across
~60 files, plus the bundles under dist/) and express 4.21.2 (CommonJS: `var Router = require('./router')`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchsmith.analyzers.javascript import JavaScriptAnalyzer
from benchsmith.cli import main
from benchsmith.sources import extract_archive
from tests.invariants import check_split
from tests.typescript_support import require_tsc

pytestmark = pytest.mark.slow

AXIOS = ("npm", "axios@1.7.9", "axios-1.7.9.tgz")
EXPRESS = ("npm", "express@4.21.2", "express-4.21.2.tgz")


@pytest.fixture(scope="module")
def tarballs(download, tmp_path_factory):
    require_tsc(JavaScriptAnalyzer().tsc_path())
    base = tmp_path_factory.mktemp("js-real")
    out = {}
    for spec in (AXIOS, EXPRESS):
        archive = download(*spec)
        root = Path(extract_archive(archive, base / spec[2].removesuffix(".tgz")))
        if (root / "package").is_dir() and not (root / "package.json").exists():
            root = root / "package"
        out[spec[2].removesuffix(".tgz")] = (archive, root)
    return out


def _build(tmp: Path, archives: list[Path]) -> Path:
    # The paper's filters only: the counts below are about references and cuts, not predictability screens.
    argv = ["build", "cceval", "--lang", "javascript", "--output", str(tmp), "--retrievers", "none", "--no-card",
            "-q", "--workers", "2", "--screens", "none"]
    for a in archives:
        argv += ["--repo", str(a)]
    assert main(argv) == 0
    return tmp / "javascript"


def test_full_build_through_the_cli(tarballs, tmp_path):
    out = _build(tmp_path / "a", [tarballs["axios-1.7.9"][0], tarballs["express-4.21.2"][0]])
    examples = check_split(out / "line_completion.jsonl", {name: root for name, (_, root) in tarballs.items()})
    by_repo: dict[str, list[dict]] = {}
    for e in examples:
        by_repo.setdefault(e["metadata"]["repository"], []).append(e)
    assert len(by_repo["axios-1.7.9"]) >= 150  # ES module imports
    assert len(by_repo["express-4.21.2"]) >= 5  # CommonJS requires
    assert {e["metadata"]["language"] for e in examples} == {"javascript"}
    codes = {e["metadata"]["diagnostic"] for e in examples}
    assert {"TS2339", "TS2348", "TS2554"} <= codes  # member, called function, constructor arity
    # members of imported modules resolve to the module that declares them (utils.isArray -> lib/utils.js)
    utils = [e for e in by_repo["axios-1.7.9"] if e["prompt"].endswith("utils.")]
    assert utils and {e["metadata"]["defining_file"] for e in utils} == {"lib/utils.js"}
    express = {e["metadata"]["file"] for e in by_repo["express-4.21.2"]}
    assert express <= {"lib/application.js", "lib/router/index.js", "lib/router/route.js", "lib/express.js"}
    for e in by_repo["express-4.21.2"]:
        assert re.search(r"\brequire\(", (tarballs["express-4.21.2"][1] / e["metadata"]["file"]).read_text())
    # the bundles under dist/ import nothing of the project: no examples there, and no repository failure
    assert not any(e["metadata"]["file"].startswith("dist/") for e in by_repo["axios-1.7.9"])
    stats = json.loads((out / "stats.json").read_text())
    assert all(r["status"] == "ok" for r in stats["per_repository"])

    # deterministic: express again, alone, gives the same examples byte for byte
    again = _build(tmp_path / "b", [tarballs["express-4.21.2"][0]])
    first = [line for line in (out / "line_completion.jsonl").read_text(encoding="utf-8").splitlines()
             if json.loads(line)["metadata"]["repository"] == "express-4.21.2"]
    assert first == (again / "line_completion.jsonl").read_text(encoding="utf-8").splitlines()


@pytest.mark.container
def test_container_backend_reports_what_the_local_backend_reports(tmp_path):
    """The JavaScript analyzer runs in the TypeScript image (same toolchain, JavaScript mode)."""
    from benchsmith.analyzers import AnalyzerOptions, get_analyzer
    from benchsmith.containers import build_all, detect_engine
    from benchsmith.files import snapshot
    from benchsmith.runner import ToolchainBackend

    engine = detect_engine()
    if engine is None:
        pytest.skip("no container engine answers (`docker info` / `podman info` failed)")
    build_all(engine, names=["tsc"])  # nothing to do after `make images`
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "javascript" / "project"
    refs = {}
    for backend in (ToolchainBackend.LOCAL, engine):
        analyzer = get_analyzer("javascript", AnalyzerOptions(backend=backend))
        snap = snapshot(fixture, analyzer.extensions, tmp_path / backend.value / "snap", repo_name="project")
        snap.configs = analyzer.read_configs(fixture)
        res = analyzer.analyze(snap, tmp_path / backend.value / "work")
        assert [e.item_id for e in res.exclusions] == ["project/src/broken.js"], res.exclusions
        refs[backend] = [r.to_dict() for r in res.refs]
    assert refs[ToolchainBackend.LOCAL] and refs[ToolchainBackend.LOCAL] == refs[engine]
