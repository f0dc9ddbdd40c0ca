"""A repository's tsconfig/jsconfig files, read as data only: JSON with comments and trailing commas, merged into
the ``paths``/``baseUrl`` mapping the resolver and our own tsconfig use.  ``extends`` is followed only to other
configs of the repository (never a package), and every target is kept inside the tree."""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass
from typing import Any, Mapping

from benchsmith.config_values import (MAX_CONFIG_CHARS, MAX_DEPTH, Rejection, ValueKind, is_path_pattern,
                                      repo_path)


_OUTSIDE = re.compile(r'["/,\]}\[{]')  # what changes the scan outside a string
_IN_STRING = re.compile(r'["\\]')


class JsoncTooLarge(ValueError):
    """A JSONC text past a parsing cap (its size, or arrays/objects nested deeper than MAX_DEPTH)."""


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas -> JSON (string-aware), in one pass: each step jumps with a regex
    search or ``str.find`` to the next character that matters and never looks back, so the cost is linear in the
    text.  A comma is kept until the next significant character shows whether it trails.  Raises
    ``JsoncTooLarge`` past MAX_CONFIG_CHARS or MAX_DEPTH (json.loads would recurse that deep)."""
    if len(text) > MAX_CONFIG_CHARS:
        raise JsoncTooLarge(f"{len(text)} characters, over the {MAX_CONFIG_CHARS} cap")
    out: list[str] = []
    last_comma = -1  # index in ``out`` of a comma with nothing significant after it yet
    depth = 0
    i, n = 0, len(text)
    while i < n:
        m = _OUTSIDE.search(text, i)
        j = n if m is None else m.start()
        if j > i:
            chunk = text[i:j]
            out.append(chunk)
            if last_comma >= 0 and chunk.strip(" \t\r\n"):
                last_comma = -1
        if m is None:
            break
        ch = text[j]
        if ch == '"':
            k = j + 1
            while True:  # to the closing quote, past escapes
                e = _IN_STRING.search(text, k)
                if e is None:
                    k = n
                    break
                if text[e.start()] == "\\":
                    k = e.start() + 2
                    continue
                k = e.start() + 1
                break
            out.append(text[j:k])
            last_comma = -1
            i = k
        elif ch == "/" and text.startswith("//", j):
            e = text.find("\n", j)
            i = n if e < 0 else e
        elif ch == "/" and text.startswith("/*", j):
            e = text.find("*/", j + 2)
            i = n if e < 0 else e + 2
        elif ch == ",":
            out.append(ch)
            last_comma = len(out) - 1
            i = j + 1
        else:
            if ch in "}]":
                if last_comma >= 0:
                    out[last_comma] = ""  # a comma before a closing bracket (possibly after comments)
                depth -= 1
            elif ch in "{[":
                depth += 1
                if depth > MAX_DEPTH:
                    raise JsoncTooLarge(f"arrays/objects nested deeper than {MAX_DEPTH}")
            out.append(ch)
            last_comma = -1
            i = j + 1
    return "".join(out)


# targets of ``paths`` patterns read over all configs of a repository (each (config, root) pair once), and distinct
# patterns kept (the resolver tries each for every import): past either the rest is refused.  Real monorepos map a
# few hundred.
MAX_PATH_ENTRIES = 10_000
MAX_PATH_PATTERNS = 2_000
MAX_EXTENDS_CHAIN = 32  # configs one config reaches through ``extends`` (tsc only stops at a cycle)


@dataclass(frozen=True)
class PathConfig:
    """Path mapping merged from a repository's tsconfig files, targets relative to the tree root."""

    paths: tuple[tuple[str, tuple[str, ...]], ...] = ()  # pattern -> targets, in tsc's order
    base_url: str | None = None  # one baseUrl directory (relative to the root) when the configs agree on one
    notes: tuple[str, ...] = ()  # configs skipped and why
    rejections: tuple[Rejection, ...] = ()  # values refused by their grammar, files past a parsing cap

    def __bool__(self) -> bool:
        return bool(self.paths) or self.base_url is not None


class _Options:
    """Effective ``baseUrl``/``paths`` of each config, following *repository-local* ``extends`` only; each value is
    paired with the config that defines it (TypeScript resolves it against that config's directory).  Memoised
    per config, so a wide or repeated ``extends`` graph costs its size, not the number of its paths.  A cycle (tsc
    refuses one) or a chain past MAX_EXTENDS_CHAIN is cut where the walk first meets it; configs are walked in
    sorted order, so where that is does not vary."""

    def __init__(self, configs: Mapping[str, Any]) -> None:
        self.configs = configs
        self.memo: dict[str, dict[str, tuple[str, Any]]] = {}
        self.open: set[str] = set()  # configs whose extends are being followed

    def of(self, rel: str) -> dict[str, tuple[str, Any]]:
        if rel in self.memo:
            return self.memo[rel]
        if rel in self.open or len(self.open) >= MAX_EXTENDS_CHAIN:
            return {}
        data = self.configs.get(rel)
        if not isinstance(data, dict):
            return {}
        self.open.add(rel)
        found: dict[str, tuple[str, Any]] = {}
        ext = data.get("extends")
        parents = [ext] if isinstance(ext, str) else ext if isinstance(ext, list) else []
        for parent in dict.fromkeys(p for p in parents if isinstance(p, str)):
            if not parent.startswith((".", "/")) or parent.startswith("/"):
                continue  # a package name (node_modules) or an absolute path: never read
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), parent))
            for cand in (target, target + ".json"):
                if cand in self.configs:
                    found.update(self.of(cand))
                    break
        self.open.discard(rel)
        opts = data.get("compilerOptions")
        if isinstance(opts, dict):
            if isinstance(opts.get("baseUrl"), str):
                found["baseUrl"] = (rel, opts["baseUrl"])
            if isinstance(opts.get("paths"), dict):
                found["paths"] = (rel, opts["paths"])
        self.memo[rel] = found
        return found


def inside(rel: str) -> str | None:
    """``rel`` normalised ('' for the root itself); None when it leaves the tree."""
    rel = posixpath.normpath(rel)
    if rel == ".":
        return ""
    if rel.startswith("../") or rel == ".." or rel.startswith("/"):
        return None
    return rel


def _parse(texts: Mapping[str, str], notes: list[str], rejected: list[Rejection]) -> dict[str, Any]:
    configs: dict[str, Any] = {}
    for rel in sorted(texts):
        try:
            configs[rel] = json.loads(strip_jsonc(texts[rel]))
        except JsoncTooLarge as exc:
            rejected.append(Rejection.too_large(rel, str(exc)))
        except (json.JSONDecodeError, RecursionError) as exc:
            notes.append(f"{rel}: not JSON ({exc.msg if hasattr(exc, 'msg') else exc}); ignored")
    return configs


class _Paths:
    """``paths`` tables merged in config order, each target checked to be a path inside the tree."""

    def __init__(self, rejected: list[Rejection]) -> None:
        self.merged: dict[str, list[str]] = {}
        self.seen: dict[str, set[str]] = {}
        self.done: set[tuple[str, str]] = set()
        self.entries = 0
        self.rejected = rejected

    def add(self, config: str, root: str, paths: dict) -> None:
        if (config, root) in self.done:
            return  # the same table over the same root, inherited by another config
        self.done.add((config, root))
        # a table that would pass a cap is refused whole (not cut where the count ran out)
        size = sum(len(t) for t in paths.values() if isinstance(t, list))
        new = sum(1 for p in paths if p not in self.seen)
        if self.entries + size > MAX_PATH_ENTRIES or len(self.seen) + new > MAX_PATH_PATTERNS:
            self.rejected.append(Rejection.too_large(
                config, f"paths of {len(paths)} patterns and {size} targets, past the caps of {MAX_PATH_PATTERNS} "
                        f"patterns and {MAX_PATH_ENTRIES} targets per repository"))
            return
        self.entries += size
        key = "compilerOptions.paths"
        for pattern, targets in paths.items():
            if not is_path_pattern(pattern):
                self.rejected.append(Rejection.of(config, key, pattern, ValueKind.PATH_PATTERN))
                continue
            if not isinstance(targets, list):
                self.rejected.append(Rejection.of(config, f"{key}[{pattern!r}]", targets, ValueKind.REPO_PATH))
                continue
            for t in targets:
                if not isinstance(t, str) or not is_path_pattern(t):
                    self.rejected.append(Rejection.of(config, f"{key}[{pattern!r}]", t, ValueKind.PATH_PATTERN))
                    continue
                full = repo_path(root, t)
                if full is None:
                    self.rejected.append(Rejection.of(config, f"{key}[{pattern!r}]", t, ValueKind.REPO_PATH))
                    continue
                if t.endswith("/") and not full.endswith("/"):
                    full += "/"  # "rxjs": ["./"] means the directory
                seen = self.seen.setdefault(pattern, set())
                if full not in seen:
                    seen.add(full)
                    self.merged.setdefault(pattern, []).append(full)


def merge_path_configs(texts: Mapping[str, str]) -> PathConfig:
    """``{relative config path: text}`` -> one ``PathConfig`` (configs sorted by path; bad ones noted, refused
    values and files past a cap kept as ``rejections``)."""
    notes: list[str] = []
    rejected: list[Rejection] = []
    configs = _parse(texts, notes, rejected)
    options = _Options(configs)
    table = _Paths(rejected)
    base_urls: list[str] = []
    for rel in sorted(configs):
        eff = options.of(rel)
        base = None
        if "baseUrl" in eff:
            defined_in, b = eff["baseUrl"]
            base = repo_path(posixpath.dirname(defined_in), b)
            if base is None:
                rejected.append(Rejection.of(defined_in, "compilerOptions.baseUrl", b, ValueKind.REPO_PATH))
            elif base not in base_urls:
                base_urls.append(base)
        if "paths" in eff:
            defined_in, paths = eff["paths"]
            root = base if base is not None else inside(posixpath.dirname(defined_in))
            if root is not None:
                table.add(defined_in, root, paths)
    merged = table.merged
    base_url = base_urls[0] if len(base_urls) == 1 else None
    if len(base_urls) > 1:
        # tsc takes one baseUrl; several are approximated by a catch-all pattern over each, in config order
        lst = merged.setdefault("*", [])
        for b in base_urls:
            t = posixpath.join(b, "*") if b else "*"
            if t not in lst:
                lst.append(t)
        notes.append(f"several baseUrl directories ({', '.join(b or '.' for b in base_urls)}) merged as '*'")
    # a value refused once is recorded once, however many configs inherit it
    return PathConfig(tuple((p, tuple(ts)) for p, ts in merged.items()), base_url, tuple(notes),
                      tuple(dict.fromkeys(rejected)))
