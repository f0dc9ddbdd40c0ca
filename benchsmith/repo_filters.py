"""Repository-level filters: permissive licence, created-after date, released-after date, file count and size bounds.

Licences are detected from the licence file's text (SPDX-style identification by distinctive phrases), never from
metadata a repository could set to anything -- except for a registry source, whose licence is what its registry
declares (normalised to SPDX; the licence file decides only when the declaration names no licence without doubt),
and whose dates are the registry's: ``created`` is the package's first release, ``released`` this version's."""

from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path

from benchsmith.files import RepoSnapshot
from benchsmith.records import Checkout, Reason
from benchsmith.sources import RepoFilterConfig
from benchsmith.enums import StrEnum

LICENSE_FILE_RE = re.compile(r"^(licen[cs]e|copying|unlicense)([._-].*)?$", re.IGNORECASE)


class License(StrEnum):
    MIT = "MIT"
    APACHE_2 = "Apache-2.0"
    BSD_3 = "BSD-3-Clause"
    BSD_2 = "BSD-2-Clause"
    ISC = "ISC"
    UNLICENSE = "Unlicense"
    ZLIB = "Zlib"
    PSF = "PSF-2.0"
    MPL_2 = "MPL-2.0"
    GPL = "GPL"
    LGPL = "LGPL"
    AGPL = "AGPL"
    UNKNOWN = "unknown"


PERMISSIVE = frozenset({License.MIT, License.APACHE_2, License.BSD_3, License.BSD_2, License.ISC,
                        License.UNLICENSE, License.ZLIB, License.PSF})

# Order matters: the more specific texts first (BSD-3 contains BSD-2's clauses, LGPL mentions GPL).
_PATTERNS: list[tuple[License, re.Pattern]] = [
    (License.AGPL, re.compile(r"GNU AFFERO GENERAL PUBLIC LICENSE", re.I)),
    (License.LGPL, re.compile(r"GNU LESSER GENERAL PUBLIC LICENSE|GNU LIBRARY GENERAL PUBLIC", re.I)),
    (License.GPL, re.compile(r"GNU GENERAL PUBLIC LICENSE", re.I)),
    (License.MPL_2, re.compile(r"Mozilla Public License,? (Version|v\.?) ?2\.0", re.I)),
    (License.APACHE_2, re.compile(r"Apache License,?\s+Version 2\.0|Licensed under the Apache License", re.I)),
    (License.UNLICENSE, re.compile(r"This is free and unencumbered software released into the public domain", re.I)),
    (License.BSD_3, re.compile(r"Neither the names? of .{0,200}? nor the names|contributors may be used to endorse", re.I | re.S)),
    (License.BSD_2, re.compile(r"Redistributions in binary form must reproduce the above copyright", re.I)),
    (License.MIT, re.compile(r"Permission is hereby granted, free of charge, to any person obtaining a copy", re.I)),
    (License.ISC, re.compile(r"Permission to use, copy, modify, and(/or)? distribute this software for any purpose", re.I)),
    (License.ZLIB, re.compile(r"This software is provided 'as-is', without any express or implied", re.I)),
    (License.PSF, re.compile(r"PYTHON SOFTWARE FOUNDATION LICENSE", re.I)),
]


def classify_license(text: str) -> License:
    """The licence whose distinctive phrase comes first: files that bundle third-party licences (scipy,
    matplotlib) state the project's own licence at the top."""
    text = re.sub(r"\s+", " ", text)
    best: tuple[int, int, License] | None = None
    for order, (lic, pattern) in enumerate(_PATTERNS):
        m = pattern.search(text)
        if m and (best is None or (m.start(), order) < best[:2]):
            best = (m.start(), order, lic)
    if best is None:
        return License.UNKNOWN
    start, _, lic = best
    if lic is License.BSD_2 and _PATTERNS[6][1].search(text[start : start + 2000]):
        return License.BSD_3  # BSD-3 is BSD-2 plus the endorsement clause, which follows the binary clause
    return lic


def detect_license(root: str | os.PathLike) -> License | None:
    """Licence of the repository at ``root`` from its top-level licence file; None when there is none.
    Licence files that are symlinks are ignored (never followed)."""
    root = Path(root)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return None
    found = None
    for name in names:
        if not LICENSE_FILE_RE.match(name):
            continue
        path = root / name
        if path.is_symlink() or not path.is_file():
            continue
        try:
            with open(path, "rb") as fh:
                text = fh.read(200_000).decode("utf-8", errors="replace")
        except OSError:
            continue
        lic = classify_license(text)
        if lic is not License.UNKNOWN:
            return lic
        found = License.UNKNOWN
    return found


def _registry_license(release) -> "tuple[Reason, str] | bool | None":
    """The licence verdict from a registry's declared licence: True to keep, (reason, detail) to drop, None when
    the declaration names no licence without doubt (the licence file decides, as for any other source)."""
    from benchsmith.registries.licenses import is_permissive

    permissive = is_permissive(release.license_spdx)
    if permissive is None:
        return None
    if permissive:
        return True
    return Reason.LICENSE_NOT_PERMISSIVE, f"the registry declares {release.license_spdx}"


def check_repository(checkout: Checkout, snap: RepoSnapshot, cfg: RepoFilterConfig) -> tuple[Reason, str] | None:
    """None to keep the repository, or (reason, detail)."""
    release = checkout.release  # a registry source's RegistryRelease: its declared licence and dates
    if cfg.permissive_license:
        verdict = _registry_license(release) if release is not None else None
        if isinstance(verdict, tuple):
            return verdict
        if verdict is None:
            lic = detect_license(checkout.path)
            checkout.license = str(lic) if lic else None
            if lic is None:
                return Reason.LICENSE_MISSING, "no LICENSE/COPYING file at the repository root"
            if lic not in PERMISSIVE:
                return Reason.LICENSE_NOT_PERMISSIVE, f"licence detected as {lic}"
    first = "first release" if release is not None else "first commit"
    if cfg.created_after is not None:
        if not checkout.created:
            return Reason.CREATED_DATE_UNKNOWN, f"no {first} date" + ("" if release else " (not a full git history)")
        created = _dt.datetime.fromisoformat(checkout.created.replace("Z", "+00:00")).date()
        if created < cfg.created_after:
            return Reason.CREATED_BEFORE, f"{first} {created} < {cfg.created_after}"
    if cfg.released_after is not None:
        released = getattr(release, "released", None)
        if not released:
            return Reason.RELEASE_DATE_UNKNOWN, ("the registry states no release date for this version" if release
                                                 else "only a registry source has a release date")
        day = _dt.datetime.fromisoformat(released.replace("Z", "+00:00")).date()
        if day < cfg.released_after:
            return Reason.RELEASED_BEFORE, f"version {release.version} released {day} < {cfg.released_after}"
    n = len(snap.files)
    if cfg.min_files is not None and n < cfg.min_files:
        return Reason.TOO_FEW_FILES, f"{n} source files < {cfg.min_files}"
    if cfg.max_files is not None and n > cfg.max_files:
        return Reason.TOO_MANY_FILES, f"{n} source files > {cfg.max_files}"
    if cfg.max_bytes is not None:
        size = snap.total_bytes()
        if size > cfg.max_bytes:
            return Reason.REPO_TOO_LARGE, f"{size} bytes of source > {cfg.max_bytes}"
    return None
