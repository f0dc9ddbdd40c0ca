"""Roslyn discovery: ``csc.dll`` of the newest SDK next to ``dotnet`` and the reference assemblies of its newest
shared framework (the first choice of compiler where they exist)."""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from pathlib import Path

from benchsmith.runner import which


@dataclass(frozen=True)
class Roslyn:
    dotnet: str
    csc_dll: str
    references: tuple[str, ...]


def find_roslyn(dotnet: str | None = None) -> Roslyn | None:
    """csc.dll of the newest SDK and the reference assemblies of the newest shared framework next to ``dotnet``."""
    exe = dotnet or which("dotnet")
    if not exe:
        return None
    root = Path(os.path.realpath(exe)).parent

    def newest(pattern: str) -> list[str]:
        found = glob.glob(str(root / pattern))
        return sorted(found, key=lambda p: [int(x) if x.isdigit() else x for x in re.split(r"[.\-/]", p)])

    cscs = newest("sdk/*/Roslyn/bincore/csc.dll")
    refdirs = newest("packs/Microsoft.NETCore.App.Ref/*/ref/net*")
    if not cscs or not refdirs:
        return None
    refs = tuple(sorted(glob.glob(os.path.join(refdirs[-1], "*.dll"))))
    return Roslyn(exe, cscs[-1], refs)
