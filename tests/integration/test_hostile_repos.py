"""Hostile repositories (tests/hostile.py) through the real CLI: each yields recorded exclusions, nothing outside a
repository is read or written, nothing from a repository runs, and the other repositories still give examples."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsmith.builders.cceval.build import unique_names
from benchsmith.records import Reason, RepoSpec
from tests.hostile import make_slow_file, make_suite, tree_digest

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTROL = REPO_ROOT / "samples" / "python" / "shoplib"


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "benchsmith.cli", "build", "cceval", "--retrievers", "none", "--no-card", "-q",
           *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)
    assert res.returncode == 0, f"build failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


def read(path: Path) -> list[dict]:
    # split at \n only: a JSON string may hold U+2028 or \x85 unescaped, which str.splitlines() breaks at
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


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
    """A file that keeps astroid busy for minutes, with --timeout 3: that repository is recorded as a toolchain
    timeout, the other repository still gives examples, and no pylint process outlives the build."""
    case = make_slow_file(tmp_path)
    out = tmp_path / "out"
    start = time.monotonic()
    cli("--lang", "python", "--output", str(out), "--timeout", "3", "--workers", "2",
        "--repo", case.source, "--repo", str(CONTROL))
    elapsed = time.monotonic() - start
    excluded = read(out / "python" / "excluded.jsonl")
    slow = {e["reason"] for e in excluded if e["repository"] == "slow_inference"}
    assert str(Reason.TOOL_TIMEOUT) in slow, excluded
    examples = read(out / "python" / "line_completion.jsonl")
    assert any(ex["metadata"]["repository"] == "shoplib" for ex in examples)
    assert elapsed < 90, f"the build took {elapsed:.0f}s: the timeout did not stop pylint"
    import psutil  # the test extra
    left = []
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        try:
            if str(tmp_path) in (proc.info["cwd"] or "") or any(str(tmp_path) in a for a in proc.info["cmdline"] or []):
                left.append(proc.info["cmdline"])
        except (psutil.Error, TypeError):
            continue
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
    if not tsc.is_file() or shutil.which("node") is None:
        pytest.fail(f"pinned TypeScript missing at {tsc} (or no node): run `bash scripts/setup_toolchains.sh "
                    ".toolchains`")
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



# ================================================================================================================
# Input hygiene (issue 13): tests/hostile.py's HygieneCase block, one build per language, each next to a normal
# repository that must keep every example it has when built alone.
# ================================================================================================================

from tests.hostile import SECRET, HygieneCase, make_hygiene_suite  # noqa: E402

_TOOL_FOR = {"python": None, "csharp": "mcs", "java": "javac", "go": "go"}


def _examples_by_file(out: Path, repository: str) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for ex in read(out / "line_completion.jsonl"):
        if ex["metadata"]["repository"] == repository:
            found.setdefault(ex["metadata"]["file"], []).append(ex)
    return found


@pytest.fixture(scope="module")
def hygiene(tmp_path_factory):
    root = tmp_path_factory.mktemp("hygiene")
    outside = root / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text(SECRET)
    cases = make_hygiene_suite(root / "repos", outside)
    control = root / "repos" / "control"
    shutil.copytree(CONTROL, control)
    before = tree_digest(root)
    outs: dict[str, Path] = {}
    names: dict[str, str] = {}
    skipped: list[str] = []
    for lang, tool in _TOOL_FOR.items():
        batch = [c for c in cases if c.language == lang]
        if tool is not None and shutil.which(tool) is None:
            skipped.append(f"{lang} ({tool} not on PATH)")
            continue
        sources = [c.source for c in batch] + ([str(control)] if lang == "python" else [])
        out = tmp_path_factory.mktemp(f"hygiene-out-{lang}")
        args = ["--lang", lang, "--output", str(out), "--workers", "2"]
        for s in sources:
            args += ["--repo", s]
        cli(*args)
        outs[lang] = out / lang
        names.update(zip(sources, unique_names([RepoSpec.parse(s) for s in sources])))
    alone = tmp_path_factory.mktemp("hygiene-control-alone")
    cli("--lang", "python", "--output", str(alone), "--workers", "1", "--repo", str(control))
    return root, cases, outs, names, before, alone / "python", skipped


def _built(hygiene) -> list[tuple[HygieneCase, Path, str]]:
    _root, cases, outs, names, _before, _alone, skipped = hygiene
    if skipped:
        print(f"hygiene cases not built (toolchain missing): {', '.join(skipped)}")
    return [(c, outs[c.language], names[c.source]) for c in cases if c.language in outs]


def test_hygiene_suite_is_large_enough(hygiene):
    _root, cases, _outs, _names, _before, _alone, _skipped = hygiene
    hostile = [c for c in cases if c.items]
    assert len(hostile) >= 12, [c.name for c in hostile]


def test_hygiene_items_have_their_exact_reason(hygiene):
    for case, out, name in _built(hygiene):
        by_item: dict[str, set[str]] = {}
        reasons: set[str] = set()
        for e in read(out / "excluded.jsonl"):
            if e["repository"] == name:
                by_item.setdefault(e["item_id"], set()).add(e["reason"])
                reasons.add(e["reason"])
        for item, reason in case.items.items():
            assert by_item.get(item) == {str(reason)}, f"{case.name}: {item!r} -> {by_item.get(item)}, " \
                                                      f"expected {reason}; recorded: {sorted(by_item)}"
        bad = reasons & {str(r) for r in case.forbidden_reasons}
        assert not bad, f"{case.name}: {bad} among {sorted(reasons)}"
        assert {str(r) for r in case.reasons} <= reasons, (case.name, reasons)


def test_hygiene_markers_never_appear_and_nothing_outside_is_written(hygiene):
    root, cases, outs, _names, before, _alone, _skipped = hygiene
    for case in cases:
        for marker in case.markers:
            assert not marker.exists(), f"{case.name}: {marker} exists: something from the repository ran"
    assert tree_digest(root) == before, "a file in or next to the hygiene repositories changed"
    forbidden = [SECRET.strip(), Path("/etc/passwd").read_text().splitlines()[0]]
    for out in outs.values():
        for path in out.rglob("*"):
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")
                assert not any(f in text for f in forbidden), f"{path} holds text from outside the repositories"


def test_hygiene_cases_keep_the_examples_of_their_normal_part(hygiene):
    for case, out, name in _built(hygiene):
        found = _examples_by_file(out, name)
        for file, at_least in case.examples_from.items():
            assert len(found.get(file, [])) >= at_least, f"{case.name}: {file} gave {len(found.get(file, []))} " \
                                                        f"examples, expected >= {at_least} ({sorted(found)})"


def test_hygiene_control_keeps_all_its_examples(hygiene):
    _root, _cases, outs, names, _before, alone, _skipped = hygiene
    control = next(n for s, n in names.items() if s.endswith("/control"))
    mixed = sorted(ex["metadata"]["task_id"] for exs in _examples_by_file(outs["python"], control).values()
                   for ex in exs)
    solo = sorted(ex["metadata"]["task_id"] for ex in read(alone / "line_completion.jsonl"))
    assert solo and mixed == solo


def test_line_separators_give_exact_examples(hygiene):
    """Every file of the line-separator case: its examples put back together are the file, byte for byte, and
    every use in it became an example (two per file)."""
    for case, out, name in _built(hygiene):
        if case.name != "line_separators":
            continue
        for file, examples in _examples_by_file(out, name).items():
            with open(Path(case.source) / file, encoding="utf-8", newline="") as fh:
                text = fh.read()
            for ex in examples:
                assert ex["prompt"] + ex["groundtruth"] + ex["right_context"] == text, (file, ex["groundtruth"])
                assert re.fullmatch(r"Box\(\)(\.grow\(\d+\))?|total\(\[(1, 2, \d+|\r        1, 2)\]\)",
                                    ex["groundtruth"]), (file, ex["groundtruth"])
        return
    pytest.fail("the line-separator case was not built")


def test_go_line_directives_do_not_move_positions(hygiene):
    for case, out, name in _built(hygiene):
        if case.name != "go_line":
            continue
        broken = [e for e in read(out / "excluded.jsonl") if e["item_id"] == "go_line/broken.go"]
        assert broken and "line 4:" in broken[0]["detail"], broken  # the file's own line, not fake.go:500
        found = _examples_by_file(out, name)["main.go"]
        assert sorted(ex["groundtruth"].split("(")[0] for ex in found) == ["NewBox", "Total"]
        return
    pytest.skip("go not on PATH: the //line case was not built")


def test_resume_is_keyed_by_identity_not_basename(tmp_path):
    """r1/proj then r2/proj into the same output: the second build analyses r2 (never serves r1's examples);
    building r2 again resumes; changing one file of r2 rebuilds it."""
    def project(base: Path, member: str) -> Path:
        repo = base / "proj"
        (repo / "pkg").mkdir(parents=True)
        (repo / "pkg" / "__init__.py").write_text("")
        (repo / "pkg" / "a.py").write_text(f"def {member}(values):\n    return sum(values)\n")
        (repo / "pkg" / "b.py").write_text(f"{HEADER}def main():\n    return pkg.a.{member}([1, 2, 3])\n")
        return repo

    HEADER = '"""Uses a sibling module."""\nimport os\nimport sys\n\nimport pkg.a\n\nDEBUG = os.sep, sys.argv\n\n\n'
    r1, r2 = project(tmp_path / "r1", "first_total"), project(tmp_path / "r2", "second_total")
    out = tmp_path / "out"

    def build_once(repo: Path) -> tuple[list[dict], str]:
        res = cli("--lang", "python", "--output", str(out), "--workers", "1", "--repo", str(repo))
        return read(out / "python" / "line_completion.jsonl"), res.stdout + res.stderr

    first, _ = build_once(r1)
    assert [ex["groundtruth"] for ex in first] == ["first_total([1, 2, 3])"]
    second, _ = build_once(r2)
    assert [ex["groundtruth"] for ex in second] == ["second_total([1, 2, 3])"], "r2 was served r1's shard"
    shards = out / "python" / ".shards"
    r2_shard = next(p for p in shards.iterdir() if (p / "DONE").exists()
                    and json.loads((p / "DONE").read_text())["identity"].startswith("dir:")
                    and json.loads((p / "stats.json").read_text())["examples"] == 1
                    and "second_total" in (p / "line_completion.jsonl").read_text())
    inode = r2_shard.stat().st_ino
    build_once(r2)
    assert r2_shard.stat().st_ino == inode, "an unchanged repository was rebuilt instead of resumed"
    (r2 / "pkg" / "b.py").write_text(f"{HEADER}def main():\n    return pkg.a.second_total([4, 5])\n")
    third, _ = build_once(r2)
    assert [ex["groundtruth"] for ex in third] == ["second_total([4, 5])"], "a changed repository was resumed"


@pytest.mark.parametrize("language", sorted(_TOOL_FOR))
def test_hygiene_cases_of_each_language_were_built(hygiene, language):
    """A language whose toolchain is missing here is a visible skip, not a silently smaller suite."""
    _root, cases, outs, _names, _before, _alone, skipped = hygiene
    if language not in outs:
        pytest.skip(f"hygiene cases for {language} not built: {', '.join(skipped)}")
    assert any(c.language == language for c in cases)
