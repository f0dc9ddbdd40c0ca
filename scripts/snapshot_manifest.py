"""The behaviour snapshot's shared parts: constants, errors, file hashing with masks, manifests and their
comparison (``scripts/behaviour_snapshot.py`` is the command)."""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]

MANIFEST_FORMAT = 1
# The project tree the demo indexes (its own source) is taken from this commit, not from the checkout under
# test, so that the demo's input is the same before and after a refactor.
SELF_TREE_REV = "0c26f03b53fb56bd701f2cd1c49cfe4e5aee86db"
PARTS = ("demo", "python", "java", "typescript", "csharp")
# A toolchain that runs out of time makes the output depend on the machine's load, not on benchsmith; the
# builds get more time than the 900s default (a shared 2-core machine needs it for the demo's own tree), and a
# record that still has a timed-out item is refused (see load_dependent_exclusions).
BUILD_TIMEOUT = "3600"
# A missing toolchain is the machine's too (and its exclusion quotes the checkout's absolute path).
LOAD_DEPENDENT_REASONS = frozenset({"toolchain_timeout", "toolchain_missing"})
MARKER = ".behaviour-snapshot"  # marks a directory this script made (and may therefore empty again)


@dataclass(frozen=True)
class Mask:
    """A field that is documented as run-dependent: removed (at any depth) from every JSON value of the matching
    files before hashing; the file itself stays as written."""

    pattern: str  # fnmatch pattern on the path relative to DIR (e.g. "out/*/stats.json")
    keys: tuple[str, ...]
    why: str


# A mask goes here only for a field documented as run-dependent, with its reason (docs/behaviour-snapshot.md).
_COST_KEYS = ("wall_seconds", "build_cpu_seconds", "toolchain_cpu_seconds", "examples_per_cpu_hour")
MASKS: tuple[Mask, ...] = (
    Mask("*cost.json", _COST_KEYS, "benchsmith/repobuild/cost.py: what building each repository took, measured"),
)
# Sections of a Markdown file that are run-dependent: from the heading to the next heading of its level.
SECTION_MASKS: tuple[tuple[str, str, str], ...] = (
    ("*README.md", "## Construction cost", "builders/cceval/card_sources.py: the measured cost table"),
)


@dataclass(frozen=True)
class PathMask:
    """A part of a file's *path* that is documented as run-dependent: replaced before the path is recorded."""

    regex: str
    replacement: str
    why: str


PATH_MASKS: tuple[PathMask, ...] = (
    # builders/cceval/build.py `_shard_location`: a shard directory is named by the repository id plus a digest
    # of the id and the source's *absolute* path (so that r2/proj never resumes r1/proj's shard); two records
    # in different directories therefore name the same shard differently.  Its files are still compared.
    PathMask(r"(/\.shards/[^/]+)-[0-9a-f]{16}/", r"\1-<source digest>/",
             "shard directory digest covers the absolute source path (build.py _shard_location)"),
)


def mask_path(rel: str, masks: Sequence[PathMask] = PATH_MASKS) -> str:
    for m in masks:
        rel = re.sub(m.regex, m.replacement, rel)
    return rel


class SnapshotError(Exception):
    """A failure to report as one line (the script then exits 2)."""


def progress(msg: str) -> None:
    print(f"[behaviour-snapshot] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------ manifests

def _drop_keys(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _drop_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_drop_keys(v, keys) for v in value]
    return value


def _masked_bytes(data: bytes, rel: str, masks: Sequence[Mask]) -> tuple[bytes, list[str]]:
    """The bytes to hash for ``rel``: the file's own, or its JSON with the masked keys removed."""
    sections = [(h, why) for pattern, h, why in SECTION_MASKS if fnmatch.fnmatchcase(rel, pattern)]
    if sections:
        text, dropped = data.decode("utf-8", "replace"), []
        for heading, _why in sections:
            start = text.find("\n" + heading + "\n")
            if start >= 0:
                end = text.find("\n## ", start + len(heading) + 2)
                text = text[:start] + (text[end:] if end >= 0 else "\n")
                dropped.append(heading)
        return text.encode("utf-8"), dropped
    applied = [m for m in masks if fnmatch.fnmatchcase(rel, m.pattern)]
    if not applied:
        return data, []
    keys = frozenset(k for m in applied for k in m.keys)

    def canon(text: str) -> str:
        return json.dumps(_drop_keys(json.loads(text), keys), sort_keys=True, ensure_ascii=False)

    text = data.decode("utf-8")
    if rel.endswith(".jsonl"):
        out = "\n".join(canon(line) for line in text.splitlines() if line.strip())
    else:
        out = canon(text)
    return out.encode("utf-8"), sorted(keys)


def hash_tree(root: Path, under: str, masks: Sequence[Mask] = MASKS,
              path_masks: Sequence[PathMask] = PATH_MASKS) -> dict[str, dict[str, Any]]:
    """``{relative path: {"sha256", "size"[, "masked"]}}`` for every file under ``root/under`` (paths relative
    to ``root``, POSIX, sorted, with ``path_masks`` applied); a symbolic link is recorded by its target, never
    followed.  Two files whose masked paths coincide keep their own paths (so the clash shows in a compare)."""
    entries: dict[str, dict[str, Any]] = {}
    base = root / under
    if not base.exists():
        return entries
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames) + sorted(d for d in dirnames if os.path.islink(os.path.join(dirpath, d))):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                target = os.readlink(path)
                entries[rel] = {"symlink": target, "sha256": hashlib.sha256(target.encode()).hexdigest()}
                continue
            data = path.read_bytes()
            hashed, masked = _masked_bytes(data, rel, masks)
            entry: dict[str, Any] = {"sha256": hashlib.sha256(hashed).hexdigest(), "size": len(data)}
            if masked:
                entry["masked"] = masked
            entries[rel] = entry
    masked_paths: dict[str, list[str]] = {}
    for rel in entries:
        masked_paths.setdefault(mask_path(rel, path_masks), []).append(rel)
    renamed = {(new if len(olds) == 1 else rel): entries[rel] for new, olds in masked_paths.items() for rel in olds}
    return dict(sorted(renamed.items()))


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def load_manifest(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SnapshotError(f"cannot read manifest {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SnapshotError(f"{path} is not JSON: {exc}") from None
    if not isinstance(value, dict) or value.get("format") != MANIFEST_FORMAT or not isinstance(value.get("files"), dict):
        raise SnapshotError(f"{path} is not a behaviour-snapshot manifest (format {MANIFEST_FORMAT})")
    return value


# ------------------------------------------------------------------------------------------------ compare

@dataclass(frozen=True)
class Row:
    status: str  # differs | missing (in A only) | extra (in B only) | ignored
    path: str
    a: str | None
    b: str | None


def _short(entry: dict[str, Any] | None) -> str | None:
    return None if entry is None else entry.get("sha256", "")[:12]


def compare_sections(a: dict[str, Any], b: dict[str, Any], ignore: Sequence[str] = ()) -> list[Row]:
    rows = []
    for path in sorted(set(a) | set(b)):
        ea, eb = a.get(path), b.get(path)
        if ea is not None and eb is not None and ea.get("sha256") == eb.get("sha256") \
                and ea.get("symlink") == eb.get("symlink"):
            continue
        status = "differs" if ea is not None and eb is not None else ("missing" if eb is None else "extra")
        if any(fnmatch.fnmatchcase(path, g) for g in ignore):
            status = "ignored"
        rows.append(Row(status, path, _short(ea), _short(eb)))
    return rows


def compare_manifests(a: dict[str, Any], b: dict[str, Any], ignore: Sequence[str] = ()) -> list[Row]:
    """Every input and output file whose bytes differ between two manifests (inputs first: when an input
    differs the outputs built from it are expected to differ too)."""
    return compare_sections(a.get("inputs", {}), b.get("inputs", {}), ignore) + \
        compare_sections(a["files"], b["files"], ignore)


def _first_difference(pa: Path, pb: Path) -> str | None:
    """``line N: A ... | B ...`` for two text files, when both are still on disk."""
    try:
        la = pa.read_text(encoding="utf-8").splitlines()
        lb = pb.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            at = next((j for j, (c, d) in enumerate(zip(x, y)) if c != d), min(len(x), len(y)))
            lo = max(0, at - 40)
            return f"line {i + 1}, column {at + 1}: A {x[lo:at + 60]!r} | B {y[lo:at + 60]!r}"
    if len(la) != len(lb):
        return f"A has {len(la)} lines, B {len(lb)}"
    return "same lines, different bytes (line endings or a final newline)"


def _record_root(manifest_path: Path) -> Path | None:
    run = Path(str(manifest_path) + ".run.json")
    try:
        return Path(json.loads(run.read_text(encoding="utf-8"))["output_dir"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def print_comparison(rows: list[Row], a: dict[str, Any], b: dict[str, Any], path_a: Path, path_b: Path,
                     out=None) -> int:
    out = out or sys.stdout
    counted = [r for r in rows if r.status != "ignored"]
    if rows:
        width = max(len(r.path) for r in rows)
        print(f"{'status':<8}  {'path':<{width}}  {'A':<12}  {'B':<12}", file=out)
        for r in rows:
            print(f"{r.status:<8}  {r.path:<{width}}  {r.a or '-':<12}  {r.b or '-':<12}", file=out)
    root_a, root_b = _record_root(path_a), _record_root(path_b)
    if root_a and root_b:
        shown = 0
        for r in counted:
            if r.status == "differs" and shown < 10:
                detail = _first_difference(root_a / r.path, root_b / r.path)
                if detail:
                    print(f"  {r.path}: {detail}", file=out)
                    shown += 1
    if a.get("commands") != b.get("commands"):
        diff = difflib.unified_diff(json.dumps(a.get("commands"), indent=1).splitlines(),
                                    json.dumps(b.get("commands"), indent=1).splitlines(), "A", "B", lineterm="")
        print("note: the two records ran different commands:\n" + "\n".join(list(diff)[:40]), file=out)
    same = sum(1 for k, e in a["files"].items() if k in b["files"] and b["files"][k].get("sha256") == e.get("sha256"))
    counts = {s: sum(r.status == s for r in rows) for s in ("differs", "missing", "extra", "ignored")}
    print(f"{same} output files identical; " + ", ".join(f"{n} {s}" for s, n in counts.items()), file=out)
    return 1 if counted else 0

