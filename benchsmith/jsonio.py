"""Deterministic, atomic JSON/JSONL writing and strict reading (errors name the file and line)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator


def dumps(obj: Any) -> str:
    # ensure_ascii=False keeps source text readable; sort_keys is NOT used: field order is the schema's order.
    return json.dumps(obj, ensure_ascii=False)


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once: os.umask is process-wide, so reading it later would race other threads


class JsonlError(ValueError):
    pass


@dataclass(frozen=True)
class JsonlLine:
    """One non-blank line of a JSONL file."""

    lineno: int  # 1-based physical line number (blank lines count), for messages
    raw: str  # the line as read, always ending in exactly one "\n" (added to a last line that lacks it)
    obj: dict[str, Any]


def parse_jsonl(
    lines: Iterable[str],
    source: str | os.PathLike,
    *,
    expect: str = "a JSON object",
    error: Callable[[str], Exception] = JsonlError,
) -> Iterator[JsonlLine]:
    """Parse already-open text lines (a file handle, a gzip stream, ``io.StringIO``) as JSONL.

    Blank lines are skipped; a line that is not JSON, or not an object, raises ``error(message)`` with the
    message ``"{source}:{lineno}: ..."``. ``error`` lets a command raise its own error type (so its CLI keeps its
    exit code) without re-wrapping; ``expect`` words what an object line should hold."""
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise error(f"{source}:{lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise error(f"{source}:{lineno}: expected {expect}, got {type(obj).__name__}")
        yield JsonlLine(lineno, raw if raw.endswith("\n") else raw + "\n", obj)


def iter_jsonl(
    path: str | os.PathLike,
    *,
    expect: str = "a JSON object",
    error: Callable[[str], Exception] = JsonlError,
) -> Iterator[JsonlLine]:
    """The non-blank lines of a UTF-8 JSONL file with their line numbers; see ``parse_jsonl`` for errors.
    The file is opened on the first ``next()``, so an ``OSError`` surfaces there."""
    with open(path, encoding="utf-8") as fh:
        yield from parse_jsonl(fh, path, expect=expect, error=error)


def read_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    """Yield objects; a bad line raises ``JsonlError`` naming the file and 1-based line number."""
    for line in iter_jsonl(path):
        yield line.obj


class AtomicWriter:
    """Write to a temporary file in the target directory and rename on success, so readers never see a
    half-written file and a killed run leaves only the old file (or none)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        # mkstemp creates 0600; outputs are ordinary files, readable as the umask allows.
        os.fchmod(fd, 0o666 & ~_UMASK)
        self.tmp = Path(tmp)
        self.fh = os.fdopen(fd, "w", encoding="utf-8", newline="\n")

    def write(self, text: str) -> None:
        self.fh.write(text)

    def write_record(self, obj: Any) -> None:
        self.fh.write(dumps(obj) + "\n")

    def commit(self) -> None:
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        if not self.fh.closed:
            self.fh.close()
        self.tmp.unlink(missing_ok=True)

    def __enter__(self) -> "AtomicWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def write_jsonl(path: str | os.PathLike, records: Iterable[Any]) -> int:
    n = 0
    with AtomicWriter(path) as w:
        for rec in records:
            w.write_record(rec.to_dict() if hasattr(rec, "to_dict") else rec)
            n += 1
    return n


def write_json(path: str | os.PathLike, obj: Any) -> None:
    with AtomicWriter(path) as w:
        w.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")
