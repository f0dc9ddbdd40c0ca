"""JavaScript modules a TypeScript project imports (``import { env } from '~/env.mjs'``): companions of the sources.

They are no TypeScript sources (the snapshot leaves them out, and no example is ever cut from one), yet a name
imported from one is a project name: ``env.EMAIL_SERVER_HOST`` uses the project's ``env``.  So ``read_configs``
reads the repository's ``.js``/``.mjs``/``.cjs`` files as data beside its tsconfigs, and the plan keeps those some
TypeScript file imports (directly or through another companion): they resolve as import targets, take part in both
compiles (``allowJs`` on, ``checkJs`` off: their own code is never checked), are never stubbed, never scanned and
never walked by the checker, so they only ever hold definitions.
"""

from __future__ import annotations

import os
from typing import Callable

from benchsmith.analyzers.typescript.model import FileInfo
from benchsmith.files import DataFiles, read_data_files

COMPANION_EXTENSIONS = (".js", ".mjs", ".cjs")
# build output, vendored bundles and caches: never the module a source imports by a project path
_PRUNE = frozenset({"dist", "build", "out", "coverage", ".next", ".nuxt", ".output", "vendor", "public", "static"})
MAX_BYTES = 200_000  # a hand-written module; a bigger one is a bundle
MAX_FILES = 300


def companion_extensions(own: tuple[str, ...]) -> tuple[str, ...]:
    """The JavaScript extensions that are companions for a language whose sources have ``own`` extensions (none
    for the JavaScript analyzer, whose sources they are)."""
    return tuple(e for e in COMPANION_EXTENSIONS if e not in own)


def read_companions(repo: str | os.PathLike, own: tuple[str, ...]) -> DataFiles:
    exts = companion_extensions(own)
    if not exts:
        return DataFiles()
    found = read_data_files(repo, lambda name: name.endswith(exts), prune=lambda d: d in _PRUNE,
                            max_bytes=MAX_BYTES, max_files=MAX_FILES)
    found.skipped.clear()  # an unread companion only means fewer definitions: nothing to record
    return found


def add_companions(files: dict[str, FileInfo], data: dict[str, str], own: tuple[str, ...],
                   scan: Callable[[str, str], FileInfo]) -> None:
    """Scan the companions among ``data`` (``snapshot.configs``) into ``files``, marked ``companion``."""
    exts = companion_extensions(own)
    if not exts:
        return
    for path in sorted(data):
        if path.endswith(exts) and path not in files:
            info = scan(path, data[path])
            info.companion = True
            files[path] = info


def drop_unimported(files: dict[str, FileInfo]) -> None:
    """Keep the companions a source imports, directly or through companions (imports already resolved)."""
    kept: set[str] = set()
    frontier = [p for p, i in files.items() if not i.companion]
    while frontier:
        nxt = []
        for path in frontier:
            for site in files[path].sites:
                t = site.target
                if t is not None and t not in kept and files[t].companion:
                    kept.add(t)
                    nxt.append(t)
        frontier = nxt
    for path in [p for p, i in files.items() if i.companion and p not in kept]:
        del files[path]
