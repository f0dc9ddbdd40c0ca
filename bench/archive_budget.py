"""Decompression bombs: how long extracting a tiny .tar.bz2 that holds a 4 GiB member takes, and what survives.

The archive (~6 KB) is a small package, then a 4 GiB member of zeros, then more package members.  Before the
archive budget (issue 13) the member was decompressed in full to reach the next header (17 s measured) and its
4 GiB counted towards the 1 GiB total, so every later member was silently dropped.  Now a member over the
per-member budget is recorded; reaching what follows it would mean decompressing more than the skip budget, so
extraction ends there with a recorded reason.  ``--old REV`` also times the implementation at a git revision.

    python bench/archive_budget.py [--size-gib 4] [--old 6e5cb30]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


class _Zeros:
    def __init__(self, n: int) -> None:
        self.left = n

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        self.left -= size
        return bytes(size)


def bomb(size: int) -> Path:
    path = CACHE / f"bench-bomb-{size}.tar.bz2"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tarfile.open(tmp, "w:bz2") as tf:
        def add(name: str, data: bytes | None = None, n: int = 0) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data) if data is not None else n
            tf.addfile(info, io.BytesIO(data) if data is not None else _Zeros(n))

        add("p-1.0/pkg/__init__.py", b"")
        add("p-1.0/pkg/a.py", b"def total(xs):\n    return sum(xs)\n")
        add("p-1.0/pkg/zeros.bin", n=size)
        add("p-1.0/pkg/b.py", b"import pkg.a\n\nX = pkg.a.total([1])\n")
    tmp.rename(path)
    return path


def load_old(rev: str):
    """benchsmith.sources as it was at ``rev`` (read from git), imported under another name."""
    text = subprocess.run(["git", "show", f"{rev}:benchsmith/sources.py"], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_sources.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("old_sources", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_sources"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def run(label: str, extract, archive: Path, **kwargs) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        root = extract(archive, Path(tmp) / "x", **kwargs)
        elapsed = time.monotonic() - start
        files = sorted(p.relative_to(root).as_posix() for p in Path(root).rglob("*") if p.is_file())
    print(f"{label}: {elapsed:.2f} s, extracted {files}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-gib", type=float, default=4.0)
    ap.add_argument("--old", default=None, help="also time benchsmith/sources.py at this git revision")
    args = ap.parse_args()
    archive = bomb(int(args.size_gib * 1024 ** 3))
    print(f"{archive.name}: {archive.stat().st_size} bytes holding a {args.size_gib:g} GiB member")
    from benchsmith.sources import ArchiveSkip, extract_archive

    skipped: list[ArchiveSkip] = []
    run("now", extract_archive, archive, skipped=skipped)
    for s in skipped:
        print(f"  recorded: {s.reason} {s.member or '<archive>'}: {s.detail}")
    if args.old:
        run(f"at {args.old}", load_old(args.old).extract_archive, archive)


if __name__ == "__main__":
    main()
