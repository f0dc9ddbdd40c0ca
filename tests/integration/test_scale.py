"""Scale-out and survival of the cceval build: SIGKILL + resume, determinism across workers and executors,
worker deaths, --force, the output lock, and a merge whose memory does not grow with the shards.

The repositories are copies of samples/python/* (each pylint run costs seconds, so there are few)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from benchsmith.repobuild.cost import COST_FILE
from benchsmith.builders.cceval.build import build
from benchsmith.builders.cceval.config import BuildConfig
from benchsmith.families import FAMILIES
from benchsmith.repobuild.build import merge_shards
from benchsmith.repobuild.shard import RepoTask, ShardSummary, record_failed_task
from benchsmith.shards import DONE_FILE, LOCK_FILE, SHARDS_DIR, STAGING_PREFIX
from benchsmith.executors import ExecutorKind, WorkerDied, run_tasks
from benchsmith.records import Reason, RepoSpec
from tests.timing import scaled

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((REPO_ROOT / "samples" / "python").iterdir())
# Seeded sampling (--max-per-repo) and BM25 retrieval (extra output files) are part of what must be identical.
COMMON = ["--lang", "python", "--no-card", "-q", "--retrievers", "bm25", "--max-per-repo", "3", "--seed", "7"]


def cli_argv(out: Path, repos: list[Path], *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "benchsmith.cli", "build", "cceval", *COMMON, "--output", str(out), *extra]
    for r in repos:
        argv += ["--repo", str(r)]
    return argv


def cli(out: Path, repos: list[Path], *extra: str) -> None:
    res = subprocess.run(cli_argv(out, repos, *extra), capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert res.returncode == 0, f"build failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"


def output_files(out: Path) -> dict[str, bytes]:
    """Every file of a build (shards included) except the lock and the measured costs, by relative path."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name not in (LOCK_FILE, COST_FILE)}


def assert_identical(a: Path, b: Path) -> None:
    # cost.json holds what the run measured (seconds): both builds have one in the same places, its figures differ
    costs = [sorted(str(p.relative_to(root)) for p in root.rglob(COST_FILE)) for root in (a, b)]
    assert costs[0] == costs[1] and costs[0], costs
    for root in (a, b):  # stats.json names the file, and holds none of its seconds
        stats = json.loads((root / "python" / "stats.json").read_text())
        assert (root / "python" / stats["construction_cost"]).is_file()
        assert "wall_seconds" not in json.dumps(stats)
    fa, fb = output_files(a), output_files(b)
    assert sorted(fa) == sorted(fb), f"different files: {sorted(set(fa) ^ set(fb))}"
    different = [name for name in fa if fa[name] != fb[name]]
    assert not different, f"files differ: {different}"


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("repos")
    out = []
    for i in range(4):
        src = SAMPLES[i % len(SAMPLES)]
        dest = root / f"r{i}_{src.name}"
        shutil.copytree(src, dest)
        out.append(dest)
    return out


@pytest.fixture(scope="module")
def clean(tmp_path_factory, repos) -> Path:
    """The reference: one uninterrupted build, one worker."""
    out = tmp_path_factory.mktemp("clean")
    cli(out, repos, "--workers", "1")
    lang = out / "python"
    assert (lang / "line_completion.jsonl").stat().st_size > 0
    return out


def test_sigkill_then_rerun_is_byte_identical(tmp_path, repos, clean):
    out = tmp_path / "killed"
    shards = out / "python" / SHARDS_DIR
    proc = subprocess.Popen(cli_argv(out, repos, "--workers", "2"), cwd=REPO_ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + scaled(120)
    done: list[Path] = []
    while time.monotonic() < deadline and proc.poll() is None:
        done = list(shards.glob(f"*/{DONE_FILE}")) if shards.exists() else []
        if done:
            break
        time.sleep(0.05)
    assert done, f"no shard finished within {scaled(120):.0f}s"
    os.kill(proc.pid, signal.SIGKILL)  # the build process only: its pool workers must die with it
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    finished = {p.parent.name: p.parent.stat().st_ino for p in shards.glob(f"*/{DONE_FILE}")}
    assert 0 < len(finished) < len(repos), "the kill did not land in the middle of the build"
    assert not (out / "python" / "line_completion.jsonl").exists()
    time.sleep(0.5)
    cli(out, repos, "--workers", "2")
    assert_identical(clean, out)
    # finished shards were resumed, not rebuilt (a rebuilt shard is a new directory renamed into place)
    for name, inode in finished.items():
        assert (shards / name).stat().st_ino == inode, f"{name} was rebuilt instead of resumed"
    assert not list(shards.glob(f"{STAGING_PREFIX}*")), "staging directories of the killed run were left behind"


def test_same_inputs_and_seed_with_two_workers_are_byte_identical(tmp_path, repos, clean):
    out = tmp_path / "two"
    cli(out, repos, "--workers", "2")
    assert_identical(clean, out)
    # --force rebuilds every shard (new directories) and still writes the same bytes
    shards = out / "python" / SHARDS_DIR
    before = {p.name: p.stat().st_ino for p in shards.iterdir() if p.is_dir()}
    cli(out, repos[:1], "--workers", "2", "--force")
    rebuilt = sorted(p.name for p in shards.iterdir() if p.is_dir() and p.stat().st_ino != before.get(p.name))
    assert len(rebuilt) == 1, rebuilt
    clean_files = output_files(clean)
    for name in rebuilt:
        for f in (shards / name).iterdir():
            if f.name == COST_FILE:
                continue  # measured seconds
            assert f.read_bytes() == clean_files[f"python/{SHARDS_DIR}/{name}/{f.name}"], f"{name}/{f.name}"


# -- executor survival (module-level functions: spawn workers import them) ---------------------------------------
def _square_or_die(n: int) -> int:
    if n == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # a worker killed mid-task, as the OOM killer would
    if n == 5:
        raise ValueError("task 5 is broken")
    time.sleep(0.05)
    return n * n


def test_pool_survives_a_dying_worker():
    failures: dict[int, BaseException] = {}

    def on_error(task, exc):
        failures[task] = exc
        return -1

    results = dict(run_tasks(_square_or_die, range(7), workers=2, on_error=on_error))
    assert sorted(results) == list(range(7))
    assert {k: v for k, v in results.items() if k not in (3, 5)} == {n: n * n for n in range(7) if n not in (3, 5)}
    assert set(failures) == {3, 5}, failures  # only the culprit, not the tasks that shared its pool
    assert isinstance(failures[3], WorkerDied)
    assert isinstance(failures[5], ValueError) and "task 5" in str(failures[5])


def test_pool_without_handler_raises():
    with pytest.raises(ValueError, match="task 5"):
        list(run_tasks(_square_or_die, [4, 5, 6], workers=2))


def test_ray_executor_matches_local_and_survives_a_dying_worker(tmp_path, repos, clean):
    """One local Ray instance (2 CPUs) for both checks: Ray start-up is the slow part."""
    try:
        import ray
        from ray import cloudpickle
    except ImportError as exc:
        pytest.skip(f"ray is not importable ({exc}); install the 'ray' extra to run the Ray executor tests")
    from benchsmith.builders.cceval.command import config_from_args
    from benchsmith.cli import build_parser

    out = tmp_path / "ray"
    argv = cli_argv(out, repos, "--executor", "ray", "--workers", "2")
    args = build_parser().parse_args(argv[argv.index("build"):])
    config = config_from_args(args)
    assert config.executor is ExecutorKind.RAY
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    # Ray workers do not share pytest's sys.path: ship this test module's function by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        build(config, progress=False)
        # what the CLI writes after the build (audit.json; no card: --no-card)
        from benchsmith.builders.cceval.derived import write_derived

        write_derived(out, command=None, card=False, language_dirs=[out / "python"])
        assert_identical(clean, out)

        failures: dict[int, BaseException] = {}

        def on_error(task, exc):
            failures[task] = exc
            return -1

        results = dict(run_tasks(_square_or_die, [1, 2, 3, 4, 5], workers=2, kind=ExecutorKind.RAY,
                                 on_error=on_error))
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        ray.shutdown()
    assert results == {1: 1, 2: 4, 3: -1, 4: 16, 5: -1}
    assert isinstance(failures[3], WorkerDied) and isinstance(failures[5], ValueError), failures


# -- build-level survival -------------------------------------------------------------------------------------------
def test_failed_task_is_recorded_and_retried(tmp_path, repos):
    cfg = BuildConfig(language="python", output=str(tmp_path / "out"), repos=[RepoSpec(str(repos[1]))],
                      retrievers=(), workers=1)
    first = build(cfg, progress=False)
    shard = next(p for p in (first.output_dir / SHARDS_DIR).iterdir() if p.is_dir())
    reference = (first.output_dir / "line_completion.jsonl").read_bytes()
    # as if the worker had died on it: an error shard without DONE replaces the finished one
    summary = record_failed_task(RepoTask(cfg.repos[0], first.shards[0].name, str(shard), cfg,
                                          FAMILIES["cceval"]),
                                 WorkerDied("killed by the test"))
    assert summary.status == "error" and not (shard / DONE_FILE).exists()
    merge_shards(FAMILIES.load("cceval"), first.output_dir, [shard], [summary], cfg)
    excluded = [json.loads(x) for x in (first.output_dir / "excluded.jsonl").read_text().splitlines()]
    assert [e["reason"] for e in excluded] == [str(Reason.INTERNAL_ERROR)]
    assert "worker died" in excluded[0]["detail"]
    again = build(cfg, progress=False)
    assert not again.shards[0].skipped and (shard / DONE_FILE).exists()
    assert (again.output_dir / "line_completion.jsonl").read_bytes() == reference


def test_second_build_on_the_same_output_is_refused(tmp_path, repos):
    cfg = BuildConfig(language="python", output=str(tmp_path / "out"), repos=[RepoSpec(str(repos[0]))],
                      retrievers=())
    shards = Path(cfg.output) / "python" / SHARDS_DIR
    shards.mkdir(parents=True)
    fd = os.open(shards / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(SystemExit, match="another build is writing"):
            build(cfg, progress=False)
    finally:
        os.close(fd)


def test_merge_streams_shards(tmp_path):
    """Peak Python memory of the merge stays far below the size of the shards it concatenates."""
    cfg = BuildConfig(language="python", output=str(tmp_path))
    out = tmp_path / "python"
    shard_dirs, summaries = [], []
    line = json.dumps({"prompt": "x" * 900, "groundtruth": "y"}) + "\n"
    for i in range(8):
        d = out / SHARDS_DIR / f"s{i}"
        d.mkdir(parents=True)
        with open(d / "line_completion.jsonl", "w") as fh:
            for _ in range(4000):  # ~3.6 MB per shard, ~29 MB in all
                fh.write(line)
        (d / "excluded.jsonl").write_text("")
        (d / "stats.json").write_text(json.dumps({"repository": f"s{i}", "status": "ok", "files": 1,
                                                  "examples": 4000, "dropped": {}}))
        shard_dirs.append(d)
        summaries.append(ShardSummary(f"s{i}", examples=4000))
    tracemalloc.start()
    try:
        stats = merge_shards(FAMILIES.load("cceval"), out, shard_dirs, summaries, cfg)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    total = sum((d / "line_completion.jsonl").stat().st_size for d in shard_dirs)
    assert (out / "line_completion.jsonl").stat().st_size == total
    assert stats["examples"] == 8 * 4000
    assert peak < total / 10, f"merge peak {peak} bytes for {total} bytes of shards"
