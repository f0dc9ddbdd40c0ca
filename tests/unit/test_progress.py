"""Cross-process progress: workers write per-repository state files, the build polls them, outputs never change."""

from __future__ import annotations

import json

from benchsmith.builders.cceval.build import build
from benchsmith.builders.cceval.config import BuildConfig
from benchsmith.repobuild.scratch import progress_dir, scratch_dir
from benchsmith.progress import ProgressFile, read_all
from benchsmith.records import RepoSpec
from benchsmith.runner import repo_root


def test_progress_files_round_trip(tmp_path):
    p = ProgressFile(tmp_path / "repo-a.json")
    p.update("reading files", 3, None, force=True)
    p.update("cutting examples", 1, 4)  # throttled: within the interval of the previous write
    assert read_all(tmp_path) == {"repo-a": {"stage": "reading files", "done": 3, "total": None}}
    p.update("cutting examples", 4, 4, force=True)
    assert read_all(tmp_path)["repo-a"] == {"stage": "cutting examples", "done": 4, "total": 4}
    p.clear()
    assert read_all(tmp_path) == {}
    ProgressFile(None).update("x", 1, 1, force=True)  # disabled reporter is a no-op


def test_build_with_progress_display_writes_the_same_files_and_cleans_up(tmp_path):
    samples = repo_root() / "samples" / "python"
    outs = []
    for shown, name in ((True, "a"), (False, "b")):
        cfg = BuildConfig(language="python", output=str(tmp_path / name), retrievers=(), workers=1,
                          repos=[RepoSpec(str(samples / "shoplib")), RepoSpec(str(samples / "geokit"))])
        build(cfg, progress=shown)
        assert not progress_dir(cfg).exists() and not scratch_dir(cfg).exists()
        outs.append((tmp_path / name / "python" / "line_completion.jsonl").read_bytes())
    assert outs[0] == outs[1] and json.loads(outs[0].splitlines()[0])
