"""Hostile repositories (tests/hostile/repos.py) through the real CLI: each yields recorded exclusions, nothing
outside a repository is read or written, nothing from a repository runs, and the other repositories still give
examples."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from benchsmith.repobuild.build import unique_names
from benchsmith.records import Reason, RepoSpec
from tests.hostile import adopting_orphans, descendants, make_slow_file, make_suite, new_processes, tree_digest
from tests.hostile.builds import CONTROL, cli, read
from tests.timing import scaled
from tests.typescript_support import require_tsc


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    suite = make_suite(root / "repos")
    control = root / "repos" / "control"
    shutil.copytree(CONTROL, control)
    before = tree_digest(suite.root)
    out = root / "out"
    sources = [c.source for c in suite.cases] + [str(control)]
    args = ["--lang", "python", "--output", str(out), "--workers", "2"]
    for s in sources:
        args += ["--repo", s]
    start = time.monotonic()
    cli(*args)
    elapsed = time.monotonic() - start
    names = unique_names([RepoSpec.parse(s) for s in sources])
    return suite, out / "python", dict(zip(sources, names)), before, elapsed


def test_every_hostile_repository_is_recorded(hostile):
    suite, out, names, _before, _elapsed = hostile
    excluded = read(out / "excluded.jsonl")
    stats = json.loads((out / "stats.json").read_text())
    assert stats["repositories"] == len(suite.cases) + 1
    by_repo: dict[str, set[str]] = {}
    for e in excluded:
        by_repo.setdefault(e["repository"], set()).add(e["reason"])
    for case in suite.cases:
        name = names[case.source]
        reasons = by_repo.get(name, set())
        assert reasons, f"{case.name}: no exclusion recorded"
        missing = {str(r) for r in case.reasons} - reasons
        assert not missing, f"{case.name}: expected reasons {sorted(missing)} among {sorted(reasons)}"
        # a hostile file costs that file, never the whole run: nothing fell through to a generic failure
        assert str(Reason.INTERNAL_ERROR) not in reasons, f"{case.name}: {reasons}"


def test_specific_files_are_excluded_with_their_reason(hostile):
    _suite, out, _names, _before, _elapsed = hostile
    excluded = {(e["item_id"], e["reason"]) for e in read(out / "excluded.jsonl")}
    for item, reason in [
        ("symlink_etc/etc", Reason.SYMLINK_OUTSIDE), ("symlink_etc/passwd.py", Reason.SYMLINK_OUTSIDE),
        ("symlink_parent/up", Reason.SYMLINK_OUTSIDE), ("symlink_parent/secret.py", Reason.SYMLINK_OUTSIDE),
        ("symlink_parent/sub/loop", Reason.SYMLINK), ("big_file/huge.py", Reason.FILE_TOO_LARGE),
        ("binary_files/elf.py", Reason.BINARY_FILE), ("binary_files/latin1.py", Reason.NOT_UTF8),
        ("binary_files/truncated.py", Reason.NOT_UTF8), ("long_file/long.py", Reason.FILE_TOO_LARGE),
        ("deep_nesting/pkg/unary.py", Reason.SYNTAX_ERROR), ("deep_nesting/pkg/chain.py", Reason.SYNTAX_ERROR),
        ("deep_nesting/pkg/parens.py", Reason.SYNTAX_ERROR), ("odd_names/fifo.py", Reason.UNSAFE_PATH),
        ("odd_names/new\nline.py", Reason.UNSAFE_FILE_NAME), ("odd_names/-rf.py", Reason.UNSAFE_FILE_NAME),
        ("odd_names/dir with spaces/and\ttab/m.py", Reason.UNSAFE_FILE_NAME),
    ]:
        assert (item, str(reason)) in excluded, f"{item}: expected {reason}"


def test_nothing_outside_is_read_or_written(hostile):
    suite, out, _names, before, _elapsed = hostile
    assert tree_digest(suite.root) == before, "a file in or next to the repositories changed"
    for case in suite.cases:
        for marker in case.markers:
            assert not marker.exists(), f"{case.name}: {marker} was written (code from the repository ran, or an " \
                                        "archive member escaped)"
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            for secret in suite.forbidden_text:
                assert secret not in text, f"{path} holds content from outside the repositories ({secret!r})"
    files = {ex["metadata"]["file"] for ex in read(out / "line_completion.jsonl")}
    for f in files:
        assert not f.startswith(("up/", "etc/", "sub/loop/", "shadow_dir/")), f"a symlinked tree was read: {f}"


def test_the_rest_of_the_run_completes(hostile):
    suite, out, names, _before, _elapsed = hostile
    examples = read(out / "line_completion.jsonl")
    per_repo: dict[str, int] = {}
    for ex in examples:
        per_repo[ex["metadata"]["repository"]] = per_repo.get(ex["metadata"]["repository"], 0) + 1
    assert per_repo.get("control", 0) >= 3, per_repo
    # the repositories that mix hostile files with a real package still give examples from the package
    for case in suite.cases:
        if case.runs_toolchain:
            assert per_repo.get(names[case.source], 0) >= 1, f"{case.name}: no examples ({per_repo})"
    # the unicode package is analysed like any other
    assert any("p\u00e4ck\u00e4ge/" in ex["metadata"]["file"] for ex in examples) or any(
        "p\u00e4ck\u00e4ge/" in e["item_id"] for e in read(out / "excluded.jsonl"))
    stats = json.loads((out / "stats.json").read_text())
    assert [r["repository"] for r in stats["per_repository"]] == list(names.values())
    # scorable by construction, hostile input included
    assert stats["self_consistency"]["compat"]["violations"] == stats["self_consistency"]["default"]["violations"] == 0


def test_unresolvable_url_says_why(hostile):
    _suite, out, _names, _before, _elapsed = hostile
    clone = [e for e in read(out / "excluded.jsonl") if e["reason"] == str(Reason.CLONE_FAILED)]
    assert len(clone) == 1 and "nonexistent.invalid" in clone[0]["detail"] and "fatal" in clone[0]["detail"], clone


def test_slow_file_hits_the_timeout_and_the_run_goes_on(tmp_path):
    """A file that keeps astroid busy for a quarter of an hour or more, with a --timeout the normal repository
    needs a small part of even on a busy machine: that repository is recorded as a toolchain timeout, the other
    repository still gives examples, and nothing the build started outlives it."""
    case = make_slow_file(tmp_path)
    out = tmp_path / "out"
    timeout = scaled(15)  # shoplib: ~3 s of pylint on an idle machine
    before = {e.pid for e in descendants()}
    start = time.monotonic()
    with adopting_orphans():
        cli("--lang", "python", "--output", str(out), "--timeout", f"{timeout:.0f}", "--workers", "2",
            "--repo", case.source, "--repo", str(CONTROL))
        elapsed = time.monotonic() - start
        left = [(e.pid, e.state) for e in new_processes(before)]
    excluded = read(out / "python" / "excluded.jsonl")
    slow = {e["reason"] for e in excluded if e["repository"] == "slow_inference"}
    assert str(Reason.TOOL_TIMEOUT) in slow, excluded
    examples = read(out / "python" / "line_completion.jsonl")
    assert any(ex["metadata"]["repository"] == "shoplib" for ex in examples)
    # the slow file alone needs far longer than this (make_slow_file): only the timeout ends its run this soon
    assert elapsed < timeout + scaled(90), f"the build took {elapsed:.0f}s: the timeout did not stop pylint"
    assert not left, f"processes left behind: {left}"


def _typescript_available() -> Path | None:
    from benchsmith.analyzers import registry

    if "typescript" not in registry():
        return None
    return registry()["typescript"]().tsc_path()


def test_typescript_config_plugins_are_never_loaded(tmp_path):
    """A tsconfig.json asking for language-service plugins (and an `extends` chain, and a repository-local copy
    of `typescript`) must not make tsc load anything from the repository."""
    tsc = _typescript_available()
    if tsc is None:
        pytest.skip("no TypeScript analyzer in this tree")
    require_tsc(tsc)
    repo = tmp_path / "ts_plugins"
    marker = tmp_path / "TS_MARKER"
    payload = f"require('fs').appendFileSync({json.dumps(str(marker))}, 'loaded\\n');\nmodule.exports = () => ({{}});\n"
    for pkg in ("evil-plugin", "typescript", "@types/evil"):
        d = repo / "node_modules" / pkg
        (d / "lib").mkdir(parents=True)
        (d / "package.json").write_text(json.dumps({"name": pkg, "main": "index.js", "types": "index.d.ts"}))
        (d / "index.js").write_text(payload)
        (d / "lib" / "tsc.js").write_text(payload)
        (d / "lib" / "typescript.js").write_text(payload)
    (repo / "base.json").write_text(json.dumps({"compilerOptions": {"plugins": [{"name": "evil-plugin"}]}}))
    (repo / "tsconfig.json").write_text(json.dumps({
        "extends": "./base.json",
        "compilerOptions": {"plugins": [{"name": "evil-plugin"}, {"name": "./node_modules/evil-plugin"}],
                            "types": ["evil"], "typeRoots": ["./node_modules/@types"]},
    }))
    (repo / "src").mkdir()
    (repo / "src" / "util.ts").write_text("export function total(xs: number[]): number {\n"
                                         "  return xs.reduce((a, b) => a + b, 0);\n}\n\n"
                                         "export class Box {\n  size = 3;\n  grow(n: number): number {\n"
                                         "    return this.size + n;\n  }\n}\n")
    (repo / "src" / "main.ts").write_text("import { Box, total } from './util';\n\n"
                                         "export function main(argv: string[]): number {\n"
                                         "  const box = new Box();\n  console.log(argv.length);\n"
                                         "  const count = total([1, 2, 3]);\n  console.log(count);\n"
                                         "  return box.grow(count);\n}\n")
    (repo / "src" / "latin1.ts").write_bytes("// caf\xe9\nexport const x = 1;\n".encode("latin-1"))
    # configs are read as data: one that is a link to /etc/passwd, or a FIFO, must not be read at all
    (repo / "src" / "tsconfig.json").symlink_to("/etc/passwd")
    os.mkfifo(repo / "src" / "tsconfig.fifo.json")
    (repo / "src" / "leak.ts").symlink_to("/etc/passwd")
    out = tmp_path / "out"
    cli("--lang", "typescript", "--output", str(out), "--workers", "1", "--repo", str(repo))
    assert not marker.exists(), "a module from the repository was loaded: " + marker.read_text()
    passwd = Path("/etc/passwd").read_text().splitlines()[0]
    for path in out.rglob("*"):
        if path.is_file():
            assert passwd not in path.read_text(encoding="utf-8", errors="replace"), f"{path} holds /etc/passwd"
    excluded = read(out / "typescript" / "excluded.jsonl")
    assert any(e["reason"] == str(Reason.NOT_UTF8) for e in excluded), excluded
    assert any(e["reason"] == str(Reason.SYMLINK_OUTSIDE) and e["item_id"].endswith("leak.ts") for e in excluded)
    assert not any(e["reason"] == str(Reason.INTERNAL_ERROR) for e in excluded), excluded
    examples = read(out / "typescript" / "line_completion.jsonl")
    assert examples, f"no examples from the plain part of the repository; exclusions: {excluded}"
    assert all("node_modules" not in ex["metadata"]["file"] for ex in examples)
