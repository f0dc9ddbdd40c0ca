"""What every hostile case builder shares: the case records, the package text that gives an analyzer something
real to do, the sentinel secret, and a digest of a tree to show nothing was written there."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.records import Reason

# Repository-relative text that gives the analyzer something real to do: a package whose `b` module uses names
# from `a`, so pylint runs on the tree (cases that only test file vetting leave it out, which keeps them fast).
PKG_A = '''"""Helpers."""


def total(values):
    return sum(values)


class Box:
    size = 3

    def grow(self, n):
        return self.size + n
'''

PKG_B = '''"""Uses helpers from a sibling module."""
import os
import sys

import {pkg}.a


def main(argv):
    box = {pkg}.a.Box()
    print(os.sep, sys.argv, argv)
    count = {pkg}.a.total([1, 2, 3])
    return box.grow(count)
'''

SECRET = "benchsmith-outside-secret-7f3a9c\n"


@dataclass
class HostileCase:
    name: str  # repository id the build will use
    source: str  # what goes to --repo
    reasons: set[Reason] = field(default_factory=set)  # each must appear among the case's exclusions
    markers: list[Path] = field(default_factory=list)  # must never exist
    runs_toolchain: bool = False  # the case has project imports, so pylint runs on it


@dataclass
class Suite:
    root: Path
    outside: Path  # sentinel files outside every repository
    cases: list[HostileCase]
    forbidden_text: list[str]  # must appear in no output file

    def outside_digest(self) -> dict[str, str]:
        return tree_digest(self.outside)


@dataclass
class HygieneCase:
    name: str
    source: str
    language: str = "python"
    items: dict[str, Reason] = field(default_factory=dict)  # item id -> its exact reason
    reasons: set[Reason] = field(default_factory=set)  # each must appear among the repository's exclusions
    markers: list[Path] = field(default_factory=list)  # must never exist
    examples_from: dict[str, int] = field(default_factory=dict)  # file -> at least this many examples
    forbidden_reasons: set[Reason] = field(default_factory=lambda: {Reason.INTERNAL_ERROR, Reason.TOOL_CRASH,
                                                                    Reason.TOOL_TIMEOUT})


def tree_digest(root: Path) -> dict[str, str]:
    """Path -> sha256 of every file under ``root`` (symlinks not followed), to show nothing was written there."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            mode = os.lstat(p).st_mode
            if stat.S_ISLNK(mode):
                out[str(p.relative_to(root))] = "link:" + os.readlink(p)
            elif stat.S_ISREG(mode):
                out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:  # a FIFO: reading it would block
                out[str(p.relative_to(root))] = f"mode:{stat.S_IFMT(mode):o}"
    return out


def write_package(repo: Path, pkg: str = "pkg") -> None:
    (repo / pkg).mkdir(parents=True, exist_ok=True)
    (repo / pkg / "__init__.py").write_text("")
    (repo / pkg / "a.py").write_text(PKG_A)
    (repo / pkg / "b.py").write_text(PKG_B.format(pkg=pkg))
