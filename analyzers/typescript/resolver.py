"""Module resolution: what tsc does for relative and path-mapped specifiers, over the files of the tree only
(never ``node_modules``, never outside the tree)."""

from __future__ import annotations

import posixpath
from typing import Iterable, Mapping

from benchsmith.analyzers.typescript.tsconfig import PathConfig, inside


class ModuleResolver:
    def __init__(self, files: Iterable[str], config: PathConfig, extensions: tuple[str, ...],
                 extension_map: Mapping[str, tuple[str, ...]], scripts: tuple[str, ...] = ()) -> None:
        self.files = set(files)
        self.config = config
        self.extensions = extensions
        self.extension_map = extension_map
        # JavaScript modules among ``files`` (companions, allowJs): tsc tries them after every TypeScript file
        self.scripts = scripts

    def resolve(self, spec: str, importer: str) -> str | None:
        if not spec or "\\" in spec or "\x00" in spec:
            return None
        if spec in (".", "..") or spec.startswith(("./", "../")):
            base = inside(posixpath.join(posixpath.dirname(importer), spec))
            return None if base is None else self._file_or_dir(base, spec.endswith("/"))
        if spec.startswith("/"):
            return None
        for cand in self._mapped(spec):
            found = self._file_or_dir(cand.rstrip("/"), cand.endswith("/"))
            if found:
                return found
        if self.config.base_url is not None:
            base = inside(posixpath.join(self.config.base_url, spec))
            if base is not None:
                return self._file_or_dir(base, False)
        return None

    def _mapped(self, spec: str) -> list[str]:
        """Candidates from the best ``paths`` pattern (exact match first, then the longest prefix)."""
        best: tuple[int, tuple[str, ...], str] | None = None
        for pattern, targets in self.config.paths:
            if "*" not in pattern:
                if pattern == spec:
                    return [t.replace("*", "") for t in targets]
                continue
            pre, _, suf = pattern.partition("*")
            if spec.startswith(pre) and spec.endswith(suf) and len(spec) >= len(pre) + len(suf):
                if best is None or len(pre) > best[0]:
                    best = (len(pre), targets, spec[len(pre): len(spec) - len(suf)])
        if best is None:
            return []
        return [t.replace("*", best[2]) for t in best[1]]

    def _file_or_dir(self, base: str, dir_only: bool) -> str | None:
        if base.startswith("../"):
            return None
        if not dir_only:
            if base in self.files and base.endswith(self.extensions):
                return base  # explicit TypeScript extension (allowImportingTsExtensions)
            stem, ext = posixpath.splitext(base)
            for repl in self.extension_map.get(ext, ()):
                if stem + repl in self.files:
                    return stem + repl
            if self.scripts and base in self.files and base.endswith(self.scripts):
                return base  # `~/env.mjs` with no env.mts beside it: the JavaScript module itself
            for e in self.extensions + self.scripts:
                if base + e in self.files:
                    return base + e
        for e in self.extensions:
            cand = posixpath.join(base, "index" + e) if base else "index" + e
            if cand in self.files:
                return cand
        return None

