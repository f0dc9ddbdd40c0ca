"""Safe extraction of an untrusted archive (``.tar.gz``/``.tgz``/``.tar.bz2``/``.tar.xz``/``.tar``/``.zip``): members
are extracted one by one with every path checked (no ``..``, no absolute paths), so a zip-slip archive is refused
with a recorded reason instead of writing outside the work directory; links, devices, duplicates and members over
the ``ArchiveBudget`` are recorded as ``ArchiveSkip``s and never materialised (SECURITY.md).
"""

from __future__ import annotations

import errno
import re
import shutil
import stat
import tarfile
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from benchsmith.records import Reason

MAX_ARCHIVE_MEMBER = 64 * 1024 * 1024
MAX_ARCHIVE_TOTAL = 1024 * 1024 * 1024


# Raised by every way of materialising a source (clone, archive, directory); defined here, in the lower of the two
# modules, so that ``benchsmith.sources`` (which re-exports it) and this one need no import of each other.
class SourceError(Exception):
    """A repository could not be materialised; ``reason`` is recorded as its exclusion."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _archive_date(path: Path) -> str | None:
    return None  # an archive carries no trustworthy creation date; created-after filters treat it as unknown


def _safe_member(name: str) -> PurePosixPath | None:
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or any(part == ".." for part in p.parts) or not p.parts:
        return None
    if re.match(r"^[A-Za-z]:", p.parts[0]):
        return None
    return p


@dataclass(frozen=True)
class ArchiveBudget:
    """What one archive may cost to extract.  Byte limits are checked against what is actually decompressed,
    never only against what the archive declares; the member, skip and count limits make a bomb's outcome the
    same on every machine, the clock is the backstop."""

    max_member_bytes: int = MAX_ARCHIVE_MEMBER  # a bigger member is skipped (the snapshot would refuse it anyway)
    max_total_bytes: int = MAX_ARCHIVE_TOTAL  # bytes written for the whole archive; skipped members do not count
    # A compressed tar cannot seek: passing over a skipped member means decompressing it.  Past this many bytes
    # of skipped members the rest of the archive is left unread.
    max_skip_bytes: int = 256 * 1024 * 1024
    max_members: int = 100_000
    max_seconds: float = 120.0


@dataclass(frozen=True)
class ArchiveSkip:
    """A member left out of the extraction (``member`` empty: the archive as a whole, when extraction stopped)."""

    member: str
    reason: Reason
    detail: str


class _OverBudget(Exception):
    pass


class _Clocked:
    """A read-only stream that stops (``_OverBudget``) once the archive's time is up, so a member that takes
    minutes to decompress ends inside tarfile's own reads, not after them."""

    def __init__(self, fh, deadline: float, seconds: float) -> None:
        self.fh, self.deadline, self.seconds = fh, deadline, seconds
        self.name = getattr(fh, "name", None)

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() > self.deadline:
            raise _OverBudget(f"extraction stopped after its {self.seconds:g}s budget")
        return self.fh.read(size if size is not None and size >= 0 else 1024 * 1024)

    def close(self) -> None:
        self.fh.close()


_TAR_OPENERS = {".tar.gz": "gzip", ".tgz": "gzip", ".tar.bz2": "bz2", ".tar.xz": "lzma"}
_MIB = 1024 * 1024


def _mib(n: int) -> str:
    return f"{n / _MIB:.1f} MiB" if n < 1024 * _MIB else f"{n / (1024 * _MIB):.2f} GiB"


class _Extraction:
    """Book-keeping shared by the zip and tar paths: budgets, duplicates, what was left out and why."""

    def __init__(self, archive: Path, dest: Path, budget: ArchiveBudget, skipped: list[ArchiveSkip]) -> None:
        self.archive, self.dest, self.budget, self.skipped = archive, dest, budget, skipped
        self.total = 0
        self.members = 0
        self.seen: set[PurePosixPath] = set()
        self.deadline = time.monotonic() + budget.max_seconds

    def skip(self, member: str, reason: Reason, detail: str) -> None:
        self.skipped.append(ArchiveSkip(member, reason, detail))

    def check_clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise _OverBudget(f"extraction stopped after its {self.budget.max_seconds:g}s budget")

    def admit(self, name: str, rel: PurePosixPath, size: int) -> bool:
        """Whether a regular member of declared ``size`` is extracted; a refusal is recorded."""
        if rel in self.seen:
            self.skip(name, Reason.ARCHIVE_DUPLICATE_MEMBER, "a member with the same path came earlier; the first "
                      "one is kept")
            return False
        if size > self.budget.max_member_bytes:
            self.skip(name, Reason.ARCHIVE_MEMBER_TOO_LARGE, f"{size} bytes > the per-member budget of "
                      f"{_mib(self.budget.max_member_bytes)}")
            return False
        if self.total + size > self.budget.max_total_bytes:
            self.skip(name, Reason.ARCHIVE_BUDGET_EXCEEDED, f"{size} more bytes would pass the archive's budget "
                      f"of {_mib(self.budget.max_total_bytes)} ({self.total} bytes extracted so far)")
            return False
        return True

    def count_member(self) -> None:
        self.members += 1
        if self.members > self.budget.max_members:
            raise _OverBudget(f"more than {self.budget.max_members} members; the rest were not read")

    def cannot_create(self, name: str, exc: OSError) -> None:
        """A member whose path cannot be created: one an earlier member took (a file where a directory goes, or
        the reverse), or one the file system refuses (a name too long)."""
        if exc.errno in (errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            self.skip(name, Reason.ARCHIVE_DUPLICATE_MEMBER, f"its path conflicts with an earlier member: "
                      f"{exc.strerror}")
        else:
            self.skip(name, Reason.ARCHIVE_INVALID, f"cannot be created here: {exc.strerror}")

    def mkdir(self, name: str, rel: PurePosixPath) -> None:
        try:
            (self.dest / rel).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.cannot_create(name, exc)

    def write(self, name: str, rel: PurePosixPath, src, limit: int) -> None:
        """Copy at most ``limit`` bytes (the member budget, whatever the member declares) from ``src``."""
        out = self.dest / rel
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            fh = open(out, "xb")
        except OSError as exc:
            self.cannot_create(name, exc)
            return
        written = 0
        try:
            with fh:
                while True:
                    self.check_clock()
                    chunk = src.read(min(_MIB, limit + 1 - written))
                    if not chunk:
                        break
                    written += len(chunk)
                    if written > limit:
                        raise _MemberTooLarge
                    fh.write(chunk)
        except _MemberTooLarge:
            out.unlink()
            if limit < self.budget.max_member_bytes:
                self.skip(name, Reason.ARCHIVE_BUDGET_EXCEEDED, f"decompresses to more than the {limit} bytes left "
                          f"of the archive's budget of {_mib(self.budget.max_total_bytes)}")
            else:
                self.skip(name, Reason.ARCHIVE_MEMBER_TOO_LARGE, f"decompresses to more than the per-member budget "
                          f"of {_mib(self.budget.max_member_bytes)}, whatever it declares")
            return
        except BaseException:
            out.unlink(missing_ok=True)
            raise
        self.seen.add(rel)
        self.total += written


class _MemberTooLarge(Exception):
    pass


def extract_archive(archive: Path, dest: Path, *, budget: ArchiveBudget = ArchiveBudget(),
                    skipped: list[ArchiveSkip] | None = None) -> Path:
    """Extract safely; returns the project root (the single top-level directory of sdists/npm tarballs).

    A member that escapes ``dest`` refuses the whole archive (``SourceError``).  Links, devices, FIFOs, duplicate
    paths and members over ``budget`` are not extracted and are appended to ``skipped`` with their reason; when
    the archive's time or member budget runs out, extraction ends there and that is appended too (member "")."""
    dest.mkdir(parents=True, exist_ok=True)
    skipped = [] if skipped is None else skipped
    job = _Extraction(archive, dest, budget, skipped)
    try:
        if archive.name.endswith(".zip"):
            _extract_zip(job)
        else:
            _extract_tar(job)
    except _OverBudget as exc:
        job.skip("", Reason.ARCHIVE_BUDGET_EXCEEDED, f"{archive.name}: {exc} ({job.members} members read, "
                 f"{job.total} bytes extracted)")
    except SourceError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error, lzma_error()) as exc:
        if not job.seen:
            shutil.rmtree(dest, ignore_errors=True)
            raise SourceError(Reason.ARCHIVE_INVALID, f"{archive.name}: {exc}") from None
        # A stream that breaks (truncated, corrupt) after some members: those were read whole and are kept.
        job.skip("", Reason.ARCHIVE_INVALID, f"{archive.name}: extraction stopped after {len(job.seen)} files: "
                 f"{type(exc).__name__}: {exc}")
    entries = [p for p in dest.iterdir()]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return dest


def lzma_error() -> type[Exception]:
    import lzma

    return lzma.LZMAError


def _refuse(archive: Path, name: str) -> SourceError:
    return SourceError(Reason.ARCHIVE_UNSAFE, f"{archive.name}: member {name!r} escapes the extraction directory")


def _extract_zip(job: _Extraction) -> None:
    with zipfile.ZipFile(job.archive) as zf:
        for info in zf.infolist():
            job.count_member()
            job.check_clock()
            name = info.filename
            rel = _safe_member(name)
            if rel is None:
                raise _refuse(job.archive, name)
            kind = (info.external_attr >> 16) & 0o170000
            if kind == stat.S_IFLNK:
                job.skip(name, Reason.ARCHIVE_LINK, "symbolic link: never materialised")
                continue
            if info.is_dir() or kind == stat.S_IFDIR:
                job.mkdir(name, rel)
                continue
            if kind not in (0, stat.S_IFREG):
                job.skip(name, Reason.ARCHIVE_SPECIAL_MEMBER, f"file type {kind:o} (device, FIFO, socket): never "
                         "materialised")
                continue
            if not job.admit(name, rel, info.file_size):
                continue
            try:
                with zf.open(info) as src:
                    job.write(name, rel, src, min(job.budget.max_member_bytes,
                                                  job.budget.max_total_bytes - job.total))
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError, zlib.error, lzma_error()) as exc:
                (job.dest / rel).unlink(missing_ok=True)
                job.skip(name, Reason.ARCHIVE_INVALID, f"cannot decompress: {exc}")


def _extract_tar(job: _Extraction) -> None:
    archive = job.archive
    opener = next((mod for suffix, mod in _TAR_OPENERS.items() if archive.name.endswith(suffix)), None)
    if opener is None:
        raw = open(archive, "rb")  # reading past a skipped member of a plain tar is bounded by the file's size
    else:
        import importlib

        raw = importlib.import_module(opener).open(archive, "rb")
    stream = _Clocked(raw, job.deadline, job.budget.max_seconds)
    passed_over = 0  # decompressed bytes of skipped members, which a compressed stream must still read through
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tf:
            for member in tf:
                job.count_member()
                name = member.name
                rel = _safe_member(name)
                if rel is None:
                    raise _refuse(archive, name)
                if member.isdir():
                    job.mkdir(name, rel)
                    continue
                if member.issym() or member.islnk():
                    kind = "symbolic" if member.issym() else "hard"
                    job.skip(name, Reason.ARCHIVE_LINK, f"{kind} link to {member.linkname!r}: never materialised")
                    continue
                if not member.isreg():
                    job.skip(name, Reason.ARCHIVE_SPECIAL_MEMBER, "device, FIFO or other special member: never "
                             "materialised")
                    continue
                if not job.admit(name, rel, member.size):
                    passed_over += member.size
                    if opener is not None and passed_over > job.budget.max_skip_bytes:
                        raise _OverBudget(f"reaching the members after {name!r} means decompressing "
                                          f"{_mib(passed_over)} of skipped members (budget "
                                          f"{_mib(job.budget.max_skip_bytes)}); the rest were not read")
                    continue
                src = tf.extractfile(member)
                if src is None:
                    job.skip(name, Reason.ARCHIVE_SPECIAL_MEMBER, "no data")
                    continue
                job.write(name, rel, src, member.size)
    finally:
        stream.close()
