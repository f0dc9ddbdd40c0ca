"""A repository's tsconfig/jsconfig files, read as data only: JSON with comments and trailing commas, merged into
the ``paths``/``baseUrl`` mapping the resolver and our own tsconfig use.  ``extends`` is followed only to other
configs of the repository (never a package), and every target is kept inside the tree."""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Any, Mapping


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas -> JSON (string-aware)."""
    out: list[str] = []
    i, n = 0, len(text)
    in_str = False
    while i < n:
        ch = text[i]
        if in_str:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                in_str = False
            i += 1
            continue
        if ch == '"':
            in_str = True
            out.append(ch)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            rest = text[j:]
            # a comma before a closing bracket (possibly after comments) is dropped
            k = 0
            while True:
                rest = rest.lstrip(" \t\r\n")
                if rest.startswith("//"):
                    nl = rest.find("\n")
                    rest = "" if nl < 0 else rest[nl:]
                elif rest.startswith("/*"):
                    end = rest.find("*/")
                    rest = "" if end < 0 else rest[end + 2:]
                else:
                    break
                k += 1
            if not rest.startswith(("}", "]")):
                out.append(ch)
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class PathConfig:
    """Path mapping merged from a repository's tsconfig files, targets relative to the tree root."""

    paths: tuple[tuple[str, tuple[str, ...]], ...] = ()  # pattern -> targets, in tsc's order
    base_url: str | None = None  # one baseUrl directory (relative to the root) when the configs agree on one
    notes: tuple[str, ...] = ()  # configs skipped and why

    def __bool__(self) -> bool:
        return bool(self.paths) or self.base_url is not None


def _config_options(configs: Mapping[str, Any], rel: str, depth: int = 0) -> dict[str, tuple[str, Any]]:
    """Effective ``baseUrl``/``paths`` of one config following *repository-local* ``extends`` only; each value is
    paired with the directory it is relative to (TypeScript resolves them against the defining config)."""
    data = configs.get(rel)
    if not isinstance(data, dict) or depth > 8:
        return {}
    found: dict[str, tuple[str, Any]] = {}
    ext = data.get("extends")
    for parent in ([ext] if isinstance(ext, str) else ext if isinstance(ext, list) else []):
        if not isinstance(parent, str) or not parent.startswith((".", "/")) or parent.startswith("/"):
            continue  # a package name (node_modules) or an absolute path: never read
        target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), parent))
        for cand in (target, target + ".json"):
            if cand in configs:
                found.update(_config_options(configs, cand, depth + 1))
                break
    opts = data.get("compilerOptions")
    here = posixpath.dirname(rel)
    if isinstance(opts, dict):
        if isinstance(opts.get("baseUrl"), str):
            found["baseUrl"] = (here, opts["baseUrl"])
        if isinstance(opts.get("paths"), dict):
            found["paths"] = (here, opts["paths"])
    return found


def inside(rel: str) -> str | None:
    """``rel`` normalised ('' for the root itself); None when it leaves the tree."""
    rel = posixpath.normpath(rel)
    if rel == ".":
        return ""
    if rel.startswith("../") or rel == ".." or rel.startswith("/"):
        return None
    return rel


def merge_path_configs(texts: Mapping[str, str]) -> PathConfig:
    """``{relative config path: text}`` -> one ``PathConfig`` (configs sorted by path; bad ones noted)."""
    configs: dict[str, Any] = {}
    notes: list[str] = []
    for rel in sorted(texts):
        try:
            configs[rel] = json.loads(strip_jsonc(texts[rel]))
        except (json.JSONDecodeError, RecursionError) as exc:
            notes.append(f"{rel}: not JSON ({exc.msg if hasattr(exc, 'msg') else exc}); ignored")
    merged: dict[str, list[str]] = {}
    base_urls: list[str] = []
    for rel in sorted(configs):
        eff = _config_options(configs, rel)
        base = None
        if "baseUrl" in eff:
            d, b = eff["baseUrl"]
            base = inside(posixpath.join(d, b))
            if base is None:
                notes.append(f"{rel}: baseUrl outside the repository; ignored")
            elif base not in base_urls:
                base_urls.append(base)
        if "paths" in eff:
            d, paths = eff["paths"]
            root = base if base is not None else inside(d)
            if root is None:
                continue
            for pattern, targets in paths.items():
                if not isinstance(pattern, str) or pattern.count("*") > 1 or not isinstance(targets, list):
                    continue
                for t in targets:
                    if not isinstance(t, str) or t.count("*") > 1:
                        continue
                    full = inside(posixpath.join(root, t)) if not t.startswith("/") else None
                    if full is None:
                        continue
                    if t.endswith("/") and not full.endswith("/"):
                        full += "/"  # "rxjs": ["./"] means the directory
                    lst = merged.setdefault(pattern, [])
                    if full not in lst:
                        lst.append(full)
    base_url = base_urls[0] if len(base_urls) == 1 else None
    if len(base_urls) > 1:
        # tsc takes one baseUrl; several are approximated by a catch-all pattern over each, in config order
        lst = merged.setdefault("*", [])
        for b in base_urls:
            t = posixpath.join(b, "*") if b else "*"
            if t not in lst:
                lst.append(t)
        notes.append(f"several baseUrl directories ({', '.join(b or '.' for b in base_urls)}) merged as '*'")
    return PathConfig(tuple((p, tuple(ts)) for p, ts in merged.items()), base_url, tuple(notes))
