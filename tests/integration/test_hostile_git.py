"""git as data and scratch space of our own (issue 22), through the real CLI: tests/hostile/gitdata.py's cases in
one build next to a normal repository that must keep every example it has when built alone, with a predictable
scratch name planted in the temporary directory the build sees."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsmith.repobuild.build import unique_names
from benchsmith.records import Reason, RepoSpec
from tests.hostile import SECRET, tree_digest
from tests.hostile.builds import CONTROL, REPO_ROOT, read
from tests.hostile.gitdata import make_git_suite

# A build that waited on a FIFO would not finish at all; this bound is only there to turn a hang into a failure.
BUILD_TIMEOUT = 1200


def cli(*args: str, tmpdir: Path) -> None:
    """``build cceval`` through the CLI, seeing ``tmpdir`` as its temporary directory."""
    cmd = [sys.executable, "-m", "benchsmith.cli", "build", "cceval", "--retrievers", "none", "--no-card", "-q",
           *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT, cwd=REPO_ROOT,
                         env={**os.environ, "TMPDIR": str(tmpdir)})
    assert res.returncode == 0, f"build failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"


@pytest.fixture(scope="module")
def gitbuild(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-git")
    outside = root / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text(SECRET)
    cases = make_git_suite(root / "repos", outside)
    control = root / "repos" / "control"
    shutil.copytree(CONTROL, control)
    out = root / "out"
    # The temporary directory the build sees, with the name the build's scratch used to have there planted as a
    # link to a directory of "another user": nothing may be created through it.
    tmpdir = root / "tmp"
    tmpdir.mkdir()
    planted_target = root / "planted"
    planted_target.mkdir()
    key = hashlib.sha1(str(out.resolve() / "python").encode()).hexdigest()[:12]
    os.symlink(planted_target, tmpdir / f"benchsmith-build-{key}")
    before = tree_digest(root / "repos"), tree_digest(outside)
    sources = [c.source for c in cases] + [str(control)]
    args = ["--lang", "python", "--output", str(out), "--workers", "2"]
    for s in sources:
        args += ["--repo", s]
    start = time.monotonic()
    cli(*args, tmpdir=tmpdir)
    seconds = time.monotonic() - start
    alone = root / "alone"
    cli("--lang", "python", "--output", str(alone), "--workers", "1", "--repo", str(control), tmpdir=tmpdir)
    names = dict(zip(sources, unique_names([RepoSpec.parse(s) for s in sources])))
    return {"root": root, "cases": cases, "out": out / "python", "alone": alone / "python", "names": names,
            "before": before, "outside": outside, "tmpdir": tmpdir, "planted": planted_target, "seconds": seconds,
            "control": control}


def _examples(out: Path, repository: str) -> list[dict]:
    return [ex for ex in read(out / "line_completion.jsonl") if ex["metadata"]["repository"] == repository]


def test_suite_has_enough_hostile_cases(gitbuild):
    hostile = [c for c in gitbuild["cases"] if c.items or c.forbidden_commits or c.name == "config_includes"]
    assert len(hostile) >= 10, [c.name for c in hostile]


def test_each_item_has_its_exact_reason(gitbuild):
    by_repo: dict[str, dict[str, set[str]]] = {}
    for e in read(gitbuild["out"] / "excluded.jsonl"):
        by_repo.setdefault(e["repository"], {}).setdefault(e["item_id"], set()).add(e["reason"])
    for case in gitbuild["cases"]:
        recorded = by_repo.get(gitbuild["names"][case.source], {})
        for item, reason in case.items.items():
            assert recorded.get(item) == {str(reason)}, f"{case.name}: {item!r} -> {recorded.get(item)}, expected " \
                                                        f"{reason}; recorded: {sorted(recorded)}"
        git_items = {i for i, r in recorded.items() if str(Reason.GIT_METADATA_REFUSED) in r}
        assert git_items == {i for i, r in case.items.items() if r is Reason.GIT_METADATA_REFUSED}, (case.name,
                                                                                                      git_items)
        bad = {r for rs in recorded.values() for r in rs} & {str(Reason.INTERNAL_ERROR), str(Reason.TOOL_TIMEOUT),
                                                             str(Reason.TOOL_CRASH)}
        assert not bad, (case.name, bad)


def test_examples_carry_the_repository_own_commit_or_none(gitbuild):
    for case in gitbuild["cases"]:
        examples = _examples(gitbuild["out"], gitbuild["names"][case.source])
        commits = {ex["metadata"]["commit"] for ex in examples}
        assert commits == {case.commit}, f"{case.name}: commits {commits}, expected {case.commit}"
        assert not commits & case.forbidden_commits, f"{case.name}: another repository's HEAD reached its examples"


def test_each_case_keeps_the_examples_of_its_normal_part(gitbuild):
    for case in gitbuild["cases"]:
        found: dict[str, int] = {}
        for ex in _examples(gitbuild["out"], gitbuild["names"][case.source]):
            found[ex["metadata"]["file"]] = found.get(ex["metadata"]["file"], 0) + 1
        for file, at_least in case.examples_from.items():
            assert found.get(file, 0) >= at_least, f"{case.name}: {file} gave {found.get(file, 0)} examples"


def test_control_keeps_all_its_examples(gitbuild):
    mixed = sorted(ex["metadata"]["task_id"] for ex in
                   _examples(gitbuild["out"], gitbuild["names"][str(gitbuild["control"])]))
    solo = sorted(ex["metadata"]["task_id"] for ex in read(gitbuild["alone"] / "line_completion.jsonl"))
    assert solo and mixed == solo


def test_nothing_outside_is_written_or_leaked(gitbuild):
    repos_before, outside_before = gitbuild["before"]
    assert tree_digest(gitbuild["root"] / "repos") == repos_before, "a repository (or its .git) was written"
    assert tree_digest(gitbuild["outside"]) == outside_before
    assert not any(gitbuild["planted"].iterdir()), "the build wrote through a link planted at its scratch name"
    # Only the planted name is left; a non-root build also keeps its uid leases' lock directory there (a private
    # directory of ours, checked by benchsmith.uids), root keeps it under /run.
    lease_dirs = set() if os.geteuid() == 0 else {f"benchsmith-{pool}-uids-{os.geteuid()}"
                                                   for pool in ("toolchain", "sandbox")}
    left = sorted(p.name for p in gitbuild["tmpdir"].iterdir() if p.name not in lease_dirs)
    assert len(left) == 1 and left[0].startswith("benchsmith-build-"), f"left in the temporary directory: {left}"
    for path in gitbuild["out"].rglob("*"):
        if path.is_file():
            assert SECRET.strip() not in path.read_text(encoding="utf-8", errors="replace"), path


def test_no_case_hangs_the_build(gitbuild):
    """FIFOs at HEAD, in the object store and among the includes are never opened: the build's time is the
    analyzer's, not a wait (the old build hung 45 s on one FIFO; BUILD_TIMEOUT is only the backstop)."""
    assert gitbuild["seconds"] < BUILD_TIMEOUT / 2, gitbuild["seconds"]
    assert not (gitbuild["out"] / ".shards" / "scratch").exists(), "the build's scratch was not cleaned up"


@pytest.mark.skipif(shutil.which("mcs") is None, reason="mcs not on PATH")
def test_an_output_path_with_a_space_keeps_csharp_examples(tmp_path):
    """The scratch lives under the output directory; mcs takes it unquoted (``-out:``), so below a path with a
    space the build uses a fresh private directory instead, and the examples are the same as elsewhere."""
    from tests.hostile.languages import make_csharp_control

    repo = make_csharp_control(tmp_path)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    found = []
    for out in (tmp_path / "plain", tmp_path / "with space"):
        cli("--lang", "csharp", "--output", str(out), "--workers", "1", "--repo", repo.source, tmpdir=tmpdir)
        found.append(sorted(ex["metadata"]["task_id"] for ex in read(out / "csharp" / "line_completion.jsonl")))
        assert not (out / "csharp" / ".shards" / "scratch").exists()
    assert found[0] and found[1] == found[0]
    assert not [p for p in tmpdir.iterdir() if p.name.startswith("benchsmith-build-")], "fresh scratch left behind"
