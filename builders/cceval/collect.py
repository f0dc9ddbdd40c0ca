"""``benchsmith collect``: candidate packages from a registry, checked against the paper's repository criteria
without running any toolchain, written as a repos file of pinned sources plus ``collection.jsonl`` (every
candidate's registry metadata, its file counts, and why it was kept or left out).

Each candidate is resolved (pinned to its newest release unless the names file pins one), judged on its dates
first (no download), then its digest-checked artifact is fetched into the cache -- where the build finds it, so
building the repos file downloads nothing again -- extracted with the hardened archive code, and judged on
licence, source files (count, bytes: the build's own snapshot and limits) and the language's share of the files.
A registry that does not answer, or answers outside what it may say, is that candidate's recorded reason."""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.archives import SourceError
from benchsmith.files import SKIP_DIRS, FileLimits, RepoSnapshot
from benchsmith.jsonio import AtomicWriter
from benchsmith.records import Checkout, Reason, RepoSpec
from benchsmith.registries.metadata import RegistryKind, RegistryRelease, RegistrySpec
from benchsmith.sources import RepoFilterConfig

COLLECTION_FILE = "collection.jsonl"
_DECLARATION_RE = re.compile(r"\.d\.[cm]?ts$")
MAX_NAMES = 100_000


@dataclass(frozen=True)
class CollectCriteria:
    language: str
    filters: RepoFilterConfig
    min_share: float = 0.5  # the language's files among the files of every known language
    file_limits: FileLimits = FileLimits()


@dataclass
class Candidate:
    """One line of ``collection.jsonl``."""

    candidate: str
    kept: bool = False
    source: str | None = None  # the pinned repos file line
    reason: str | None = None  # a Reason value when left out
    detail: str = ""
    release: dict[str, Any] | None = None
    files: int | None = None
    source_bytes: int | None = None
    language_share: float | None = None
    declaration_files: int | None = None  # TypeScript: .d.ts files among ``files`` (types only, no code)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("candidate", "kept", "source", "reason", "detail", "release", "files",
                                              "source_bytes", "language_share", "declaration_files")}


def _language_extensions() -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    from benchsmith.languages import ANALYZERS

    exts = {name: tuple(ANALYZERS.load(name).extensions) for name in ANALYZERS.names()}
    return exts, tuple(sorted({e for v in exts.values() for e in v}))


def language_share(root: Path, language: str) -> tuple[float, int, int]:
    """(share, the language's files, files of any known language) under ``root``; links are not followed and the
    directories a snapshot skips are skipped."""
    exts, every = _language_extensions()
    mine = every_n = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            if os.path.islink(os.path.join(dirpath, name)):
                continue
            if name.endswith(every):
                every_n += 1
                mine += name.endswith(exts[language])
    return (mine / every_n if every_n else 0.0), mine, every_n


def judge(cand: Candidate, reg: RegistrySpec, crit: CollectCriteria, scratch: Path,
          rec: RegistryRelease | None = None) -> None:
    """Fill ``cand`` in: kept, or the first criterion it fails with its reason (``rec``: already resolved)."""
    from benchsmith.analyzers import get_analyzer
    from benchsmith.files import snapshot
    from benchsmith.registries import resolve
    from benchsmith.registries.checkout import materialise_registry
    from benchsmith.repo_filters import check_repository

    rec = rec or resolve(reg)
    cand.release = rec.to_dict()
    cand.source = rec.source(reg.subdir)
    pinned = reg.pinned(rec.version)
    # dates first: they need no download
    dates_only = RepoFilterConfig(created_after=crit.filters.created_after,
                                  released_after=crit.filters.released_after)
    meta = Checkout(spec=RepoSpec(cand.source), name=pinned.repo_id(), path="", kind="registry",
                    created=rec.first_released, license=rec.license_spdx, release=rec)
    verdict = check_repository(meta, RepoSnapshot(meta.name, root=None), dates_only)  # no file bound is set
    if verdict is None:
        co = materialise_registry(RepoSpec(cand.source), pinned, pinned.repo_id(), scratch / "src")
        analyzer = get_analyzer(crit.language)
        snap = snapshot(co.path, analyzer.extensions, scratch / "tree", repo_name=co.name, limits=crit.file_limits)
        cand.files, cand.source_bytes = len(snap.files), snap.total_bytes()
        share, _, _ = language_share(Path(co.path), crit.language)
        cand.language_share = round(share, 3)
        # npm packages mostly ship compiled JavaScript with declaration files: types without code, so they do
        # not count towards the files a split needs
        cand.declaration_files = sum(1 for f in snap.files if _DECLARATION_RE.search(f.path))
        code = len(snap.files) - cand.declaration_files
        if not snap.files:
            verdict = Reason.NO_SOURCE_FILES, f"no {crit.language} source files"
        else:
            verdict = check_repository(co, snap, crit.filters)
        if verdict is None and crit.filters.min_files is not None and code < crit.filters.min_files:
            verdict = Reason.TOO_FEW_FILES, (f"{code} source files with code < {crit.filters.min_files} "
                                             f"({cand.declaration_files} of the {len(snap.files)} are declarations)")
        if verdict is None and share < crit.min_share:
            verdict = Reason.LANGUAGE_SHARE_TOO_LOW, f"{share:.2f} of the files are {crit.language} < {crit.min_share}"
    if verdict is None:
        cand.kept = True
    else:
        cand.reason, cand.detail = str(verdict[0]), verdict[1]


def read_names(path: str, kind: RegistryKind) -> list[str]:
    names = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip() if not line.lstrip().startswith(f"{kind}:") else line.strip()
            if line:
                names.append(line if line.startswith(f"{kind}:") else f"{kind}:{line}")
            if len(names) > MAX_NAMES:
                raise SystemExit(f"collect: {path}: more than {MAX_NAMES} names")
    return list(dict.fromkeys(names))  # a name given twice is one candidate


def collect(names: list[str], crit: CollectCriteria, progress=None, debian: dict | None = None) -> list[Candidate]:
    """``debian``: Sources stanzas by ``debian:NAME`` (one pass over the index, not one per candidate)."""
    out = []
    for i, text in enumerate(names, 1):
        cand = Candidate(candidate=text)
        scratch = Path(tempfile.mkdtemp(prefix="benchsmith-collect-"))
        try:
            reg = RegistrySpec.parse(text)
            if reg is None:
                raise SourceError(Reason.SOURCE_NOT_FOUND, f"{text!r} names no registry")
            rec = None
            if debian is not None and text in debian:
                from benchsmith.registries import cache, debian as deb

                rec = deb.release_of(debian[text])
                reg = reg.pinned(rec.version)
                cache.store_release(rec, reg)  # the build resolves the pin from here, without the index
            judge(cand, reg, crit, scratch, rec)
        except SourceError as exc:
            cand.reason, cand.detail = str(exc.reason), exc.detail
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        out.append(cand)
        if progress:
            progress(i, len(names), cand)
    return out


def write_outputs(cands: list[Candidate], output: Path, collection: Path) -> None:
    from benchsmith.jsonio import dumps

    with AtomicWriter(output) as w:
        w.write("".join(f"{c.source}\n" for c in cands if c.kept))
    with AtomicWriter(collection) as w:
        w.write("".join(dumps(c.to_dict()) + "\n" for c in cands))


def _date(text: str) -> _dt.date:
    try:
        return _dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a YYYY-MM-DD date") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    from benchsmith.languages import ANALYZERS

    p.add_argument("--lang", required=True, choices=ANALYZERS.names(), help="the language the split is built for")
    p.add_argument("--from", dest="registry", required=True, choices=[k.value for k in RegistryKind],
                   help="the registry the candidates come from")
    p.add_argument("--names", metavar="FILE", help="candidate packages, one a line (NAME, NAME==V / NAME@V, or a "
                   "full registry source); required for pypi and npm; for debian it narrows the Sources index")
    p.add_argument("--limit", type=int, help="consider at most this many candidates (debian: in index order)")
    p.add_argument("--output", "-o", required=True, metavar="FILE", help="the repos file of pinned sources")
    p.add_argument("--collection", metavar="FILE", help=f"every candidate's record (default: {COLLECTION_FILE} "
                   "beside --output)")
    p.add_argument("--permissive-license", action="store_true", help="the registry's licence (or the licence file)")
    p.add_argument("--created-after", type=_date, metavar="YYYY-MM-DD", help="first release on or after")
    p.add_argument("--released-after", type=_date, metavar="YYYY-MM-DD", help="this version released on or after")
    p.add_argument("--min-files", type=int, default=10, help="the paper: 10")
    p.add_argument("--max-files", type=int, default=50, help="the paper: 50")
    p.add_argument("--max-repo-bytes", type=int, default=1_000_000, help="source bytes (the paper: 1 MB)")
    p.add_argument("--min-share", type=float, default=0.5, help="the language's share of the code files (0-1)")
    p.add_argument("--quiet", "-q", action="store_true")


def run(args: argparse.Namespace) -> int:
    kind = RegistryKind(args.registry)
    if args.names is None and kind is not RegistryKind.DEBIAN:
        print(f"benchsmith collect: --from {kind} needs --names FILE", file=sys.stderr)
        return 2
    try:
        names = read_names(args.names, kind) if args.names else []
    except OSError as exc:
        print(f"benchsmith collect: cannot read --names {args.names}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    debian = None
    if kind is RegistryKind.DEBIAN:
        from benchsmith.registries import debian as deb

        wanted = {RegistrySpec.parse(n).name for n in names if RegistrySpec.parse(n)} if args.names else None
        try:
            stanzas = deb.candidates(args.lang, wanted)
        except SourceError as exc:
            print(f"benchsmith collect: the Debian index: {exc.reason}: {exc.detail}", file=sys.stderr)
            return 1
        debian = {f"debian:{p['Package']}": p for p in stanzas}
        names = names or list(debian)
    names = names[: args.limit] if args.limit is not None else names
    filters = RepoFilterConfig(args.permissive_license, args.created_after, args.min_files, args.max_files,
                               args.max_repo_bytes, args.released_after)
    crit = CollectCriteria(args.lang, filters, args.min_share)

    def progress(i: int, n: int, c: Candidate) -> None:
        if not args.quiet:
            verdict = f"kept ({c.files} files)" if c.kept else f"{c.reason}: {c.detail[:120]}"
            print(f"[{i}/{n}] {c.source or c.candidate}: {verdict}", file=sys.stderr, flush=True)

    cands = collect(names, crit, progress, debian)
    output = Path(args.output)
    write_outputs(cands, output, Path(args.collection) if args.collection else output.parent / COLLECTION_FILE)
    kept = sum(c.kept for c in cands)
    if not args.quiet:
        print(f"collect: {kept} of {len(cands)} candidates kept -> {output}", file=sys.stderr)
    return 0
