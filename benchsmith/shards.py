"""Shard lifecycle for any builder that works one unit (a repository) at a time: done check, staging, commit,
failure record, the output lock, leftovers of a killed run, and the merge.

A shard directory appears atomically (a staging directory renamed into place) with a DONE marker that records
its fingerprint, so a rerun skips exactly the units that finished under the same key, and a run killed at any
moment loses at most the units in flight.  What a shard holds is the builder's business; this module knows only
the marker, ``stats.json`` (present in every committed shard) and that ``*.jsonl`` files are concatenated in
unit order by the merge.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, Iterable

from benchsmith.jsonio import AtomicWriter, write_json
from benchsmith.layout import STATS_FILE
from benchsmith.records import Exclusion

DONE_FILE = "DONE"
SHARDS_DIR = ".shards"
LOCK_FILE = ".lock"
STAGING_PREFIX = ".tmp-"


def read_done(shard: Path, fingerprint: str) -> dict | None:
    """The DONE marker of a shard finished under ``fingerprint``, else None."""
    try:
        done = json.loads((shard / DONE_FILE).read_text())
        return done if done["fingerprint"] == fingerprint else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def shard_is_done(shard: Path, fingerprint: str) -> bool:
    return read_done(shard, fingerprint) is not None


def new_staging(shard: Path) -> Path:
    # pid + random: two processes (a Ray worker on another node, a leftover of a killed run) never share one.
    staging = shard.parent / f"{STAGING_PREFIX}{shard.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    return staging


def commit_shard(staging: Path, shard: Path, fingerprint: str | None) -> None:
    """Move a complete staging directory into place.  The rename is atomic: readers see the old shard, no shard,
    or the new one, never a mix.  Should another process have committed the same shard meanwhile (a finished
    shard with the same fingerprint), that one is kept."""
    for _ in range(5):
        shutil.rmtree(shard, ignore_errors=True)
        try:
            os.replace(staging, shard)
            return
        except OSError:  # ENOTEMPTY/EEXIST: someone else's rename landed between our rmtree and replace
            if fingerprint is not None and shard_is_done(shard, fingerprint):
                shutil.rmtree(staging, ignore_errors=True)
                return
    raise OSError(f"could not move shard {staging} into place at {shard}: another process keeps replacing it")


def finish_shard(staging: Path, shard: Path, stats: dict, done: dict | None) -> None:
    """Write the shard's stats and (when it may be resumed) its DONE marker, then commit it."""
    write_json(staging / STATS_FILE, stats)
    if done is not None:
        write_json(staging / DONE_FILE, done)
    commit_shard(staging, shard, done["fingerprint"] if done is not None else None)


def record_failure(shard: Path, exclusion: Exclusion, excluded_file: str, empty_files: Iterable[str],
                   stats: dict) -> None:
    """A unit whose task produced no result (its worker died; an error escaped the builder): a shard holding the
    recorded reason so the merged files say what happened, but no DONE marker, so the next run retries it."""
    staging = new_staging(shard)
    with AtomicWriter(staging / excluded_file) as w:
        w.write_record(exclusion.to_dict())
    for name in empty_files:
        (staging / name).write_text("")
    finish_shard(staging, shard, stats, None)


class OutputLock:
    """An advisory lock on the output directory: two builds writing the same shards would undo each other."""

    def __init__(self, path: Path, out: Path) -> None:
        self.path, self.out, self.fd = path, out, -1

    def __enter__(self) -> "OutputLock":
        import fcntl

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise SystemExit(f"another build is writing to {self.out}; wait for it to finish or choose another "
                             "--output") from None
        return self

    def __exit__(self, *exc) -> None:
        os.close(self.fd)  # closing releases the lock


def remove_leftovers(out: Path, shards_root: Path) -> None:
    """Staging directories and half-written files of a killed run (never complete shards: those were renamed
    into place whole).  Safe under the lock: no other build of this directory is running."""
    for entry in os.scandir(shards_root):
        if entry.name.startswith(STAGING_PREFIX):
            shutil.rmtree(entry.path, ignore_errors=True)
    for directory in (out, shards_root):
        for entry in os.scandir(directory):
            # AtomicWriter's temporary names: .<final name>.<random>.tmp
            if entry.is_file(follow_symlinks=False) and entry.name.startswith(".") and entry.name.endswith(".tmp"):
                os.unlink(entry.path)


def merge_jsonl(out: Path, shards: list[Path], always: Iterable[str] = ()) -> None:
    """Concatenate every shard's ``*.jsonl`` files in shard order into ``out`` (streamed, atomically replaced);
    the names in ``always`` are written even when no shard has them."""
    names = set(always)
    for shard in shards:
        if not (shard / STATS_FILE).exists():
            raise RuntimeError(f"shard {shard} is missing or incomplete; rerun the build to redo that repository")
        names.update(n for n in os.listdir(shard) if n.endswith(".jsonl"))
    for fname in sorted(names):
        with AtomicWriter(out / fname) as w:
            for shard in shards:
                path = shard / fname
                if path.exists():
                    with open(path, encoding="utf-8") as fh:
                        shutil.copyfileobj(fh, w.fh)


def shard_stats(shards: list[Path]) -> list[dict[str, Any]]:
    return [json.loads((shard / STATS_FILE).read_text()) for shard in shards]


def summed_drops(stats: Iterable[dict]) -> dict[str, int]:
    dropped: dict[str, int] = {}
    for st in stats:
        for k, v in st.get("dropped", {}).items():
            dropped[k] = dropped.get(k, 0) + v
    return dict(sorted(dropped.items()))
