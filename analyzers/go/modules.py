"""Which directory an import path names: module paths from the repository's go.mod files (read as data), or, where
no go.mod covers a directory, inferred from the import paths the tree uses."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from typing import Iterable, Mapping

from benchsmith.config_values import MAX_CONFIG_CHARS, Rejection, ValueKind, is_go_module_path

# matched on one line at a time: a `^\s*` over the whole text backtracked across blank lines (1 MB of newlines:
# ~15 minutes)
_MODULE_RE = re.compile(r"[ \t]*module[ \t]+(\"[^\"]+\"|`[^`]+`|[^\s/]\S*)")


def ignored_dir(path: str) -> bool:
    """Directories the go command never treats as packages of the module (and vendored code is not ours)."""
    return any(part in ("testdata", "vendor") or part.startswith((".", "_"))
               for part in posixpath.dirname(path).split("/") if part)


def module_path(go_mod: str) -> str | None:
    """The ``module`` directive of a go.mod text (comments stripped)."""
    for line in go_mod[:MAX_CONFIG_CHARS].split("\n"):
        m = _MODULE_RE.match(line.split("//", 1)[0])
        if m:
            break
    else:
        return None
    value = m.group(1)
    if value[0] in "\"`":
        value = value[1:-1]
    return value.strip() or None



def module_rejections(go_mods: Mapping[str, str]) -> list[Rejection]:
    """The go.mod files whose ``module`` path is not a Go module path (it names the packages the checker is
    given): refused, their directories' import paths inferred as where there is no go.mod."""
    out = []
    for rel, text in sorted(go_mods.items()):
        mod = module_path(text) if posixpath.basename(rel) == "go.mod" and not ignored_dir(rel) else None
        if mod and not is_go_module_path(mod):
            out.append(Rejection.of(rel, "module", mod, ValueKind.MODULE_PATH))
    return out


def _nearest(dirs: Iterable[str], d: str) -> str | None:
    """The deepest of ``dirs`` that is ``d`` or one of its ancestors ('' is the root)."""
    best = None
    for r in dirs:
        if (r == "" or d == r or d.startswith(r + "/")) and (best is None or len(r) > len(best)):
            best = r
    return best


def package_paths(dirs: Iterable[str], go_mods: Mapping[str, str], imports: Iterable[str]) -> tuple[dict[str, str], str]:
    """``{directory: import path}`` for the package directories of the tree, and how it was found.

    Each directory under a ``go.mod`` gets the module path plus its path below that file.  Directories no go.mod
    covers (a GOPATH-style tree, a copy without go.mod) are matched against the import paths the tree uses: an
    import ``a/b/c`` of a directory ``x/b/c`` votes for the prefix ``a`` rooted at ``x``; the prefixes with the
    most votes win, one per root."""
    dirs = sorted(set(dirs))
    roots: dict[str, str] = {}
    for rel, text in sorted(go_mods.items()):
        if posixpath.basename(rel) != "go.mod" or ignored_dir(rel):
            continue
        mod = module_path(text)
        if mod and is_go_module_path(mod):  # else refused (module_rejections)
            roots[posixpath.dirname(rel)] = mod
    out: dict[str, str] = {}
    uncovered: list[str] = []
    for d in dirs:
        r = _nearest(roots, d)
        if r is None:
            uncovered.append(d)
            continue
        rest = d[len(r):].lstrip("/") if r else d
        out[d] = roots[r] + ("/" + rest if rest else "")
    how = "go.mod" if roots else ""
    if not uncovered:
        return out, how
    by_last: dict[str, list[str]] = {}
    for d in uncovered:
        if d:
            by_last.setdefault(d.rsplit("/", 1)[-1], []).append(d)
    votes: Counter = Counter()
    for p in sorted(set(imports)):
        parts = p.split("/")
        for d in by_last.get(parts[-1], ()):
            dparts = d.split("/")
            k = 0
            while k < min(len(parts), len(dparts)) and parts[-1 - k] == dparts[-1 - k]:
                k += 1
            if k < len(parts):  # a non-empty prefix: the module path
                votes[("/".join(parts[:-k]), "/".join(dparts[:-k]))] += 1
    taken_prefix: set[str] = set()
    taken_root: set[str] = set()
    inferred: dict[str, str] = {}
    for (prefix, root), _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0])):
        if prefix in taken_prefix or root in taken_root:
            continue
        taken_prefix.add(prefix)
        taken_root.add(root)
        inferred[root] = prefix
    for d in uncovered:
        r = _nearest(inferred, d)
        if r is not None:
            rest = d[len(r):].lstrip("/") if r else d
            out[d] = inferred[r] + ("/" + rest if rest else "")
    if inferred:
        how = f"{how}+inferred" if how else "inferred"
    return out, how

