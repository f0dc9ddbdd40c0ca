"""Build one of our own toolchain drivers (the javac driver, the Go type checker) once into the analyzers' cache.

The build directory is keyed by the driver's source texts and the toolchain's version, so an edited driver or a
new toolchain is built again and a stale build is never run.  A build goes to a private temporary directory and
is moved into place in one rename, so concurrent builders (a process pool) never see half a driver.  Where the
cache is not writable, the build goes under the repository's ``workdir`` instead.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Callable, Mapping

from benchsmith.analyzers.common import cache_dir


def build_once(kind: str, what: str, sources: Mapping[str, str], version: str, artifact: str, workdir: Path,
               build: Callable[[Path], str]) -> tuple[Path | None, str]:
    """The directory holding ``artifact`` built from ``sources`` (``{file name: text}``, written to ``tmp/src``),
    and an empty string; or None and why not.  ``build(tmp)`` must leave ``artifact`` in ``tmp/out`` and returns
    the message to record when it did not; ``kind`` names the cache subdirectory, ``what`` the driver in
    messages."""
    key = hashlib.sha256(("".join(sources.values()) + version).encode()).hexdigest()[:16]
    for base in (cache_dir() / kind, workdir / kind):
        target = base / key
        if (target / artifact).is_file():
            return target, ""
        try:
            tmp = base / f"{key}.tmp{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            (tmp / "src").mkdir(parents=True)
            (tmp / "out").mkdir()
            for name, text in sources.items():
                (tmp / "src" / name).write_text(text, encoding="utf-8")
        except OSError:
            continue
        try:
            failure = build(tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        if not (tmp / "out" / artifact).is_file():
            shutil.rmtree(tmp, ignore_errors=True)
            return None, failure
        try:
            os.replace(tmp / "out", target)
        except OSError:
            if not (target / artifact).is_file():  # another process may have won the race
                shutil.rmtree(tmp, ignore_errors=True)
                return None, f"could not install {what}"
        shutil.rmtree(tmp, ignore_errors=True)
        return target, ""
    return None, f"no writable directory for {what}"
