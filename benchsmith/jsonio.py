"""Deterministic, atomic JSON/JSONL writing and strict reading (errors name the file and line)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator


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


def read_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    """Yield objects; a bad line raises ``JsonlError`` naming the file and 1-based line number."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JsonlError(f"{path}:{lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(obj, dict):
                raise JsonlError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            yield obj


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
