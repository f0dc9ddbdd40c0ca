"""The toolchain lock (``benchsmith/data/toolchains.lock``): the versions of the toolchains and parsers that
decide which examples a build finds, read as data, and the versions a build ran with compared against it."""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

LOCK_PATH = Path(__file__).resolve().parent / "data" / "toolchains.lock"


class PinKind(enum.Enum):
    PIP = "pip"  # an exact version, installed as a pip constraint
    NPM = "npm"  # an exact version, installed by scripts/setup_toolchains.sh
    SYSTEM = "system"  # a release series the distribution provides: "17" holds 17.0.15, "go1.19" holds go1.19.8


@dataclass(frozen=True)
class Pin:
    kind: PinKind
    name: str
    version: str

    def holds(self, found: str) -> bool:
        """Is ``found`` (a version as the tool or the package reports it) this pin's version?"""
        if self.kind is PinKind.SYSTEM:
            return found == self.version or found.startswith(self.version + ".")
        return found == self.version


def parse(text: str) -> list[Pin]:
    pins: list[Pin] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 3:
            raise ValueError(f"toolchains.lock line {number}: expected '<kind> <name> <version>', got {raw!r}")
        try:
            kind = PinKind(parts[0])
        except ValueError:
            raise ValueError(f"toolchains.lock line {number}: unknown kind {parts[0]!r} "
                             f"(choose from: {', '.join(k.value for k in PinKind)})") from None
        pins.append(Pin(kind, parts[1], parts[2]))
    return pins


def pins(path: Path = LOCK_PATH) -> list[Pin]:
    return parse(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class LockCheck:
    """The lock's pins a build's versions name, in the lock's order, with the version found for each."""

    checked: tuple[tuple[Pin, str], ...]

    @property
    def drifted(self) -> tuple[tuple[Pin, str], ...]:
        return tuple((pin, found) for pin, found in self.checked if not pin.holds(found))

    def summary(self) -> str:
        """One line for the card."""
        if not self.checked:
            return "none of toolchains.lock's pins took part"
        names = ", ".join(f"{pin.name} {found}" for pin, found in self.checked)
        if not self.drifted:
            return f"{names} (as pinned in toolchains.lock)"
        differ = ", ".join(f"{pin.name} {found} (lock: {pin.version})" for pin, found in self.drifted)
        return f"{names}; NOT as pinned in toolchains.lock: {differ}"


def check(versions: Mapping[str, str], lock: list[Pin] | None = None) -> LockCheck:
    """Compare ``versions`` ({name: version}, as the card collects them) with the lock; pins of tools the build
    did not use are left out."""
    lock = pins() if lock is None else lock
    return LockCheck(tuple((pin, str(versions[pin.name])) for pin in lock if pin.name in versions))


@functools.lru_cache(maxsize=None)
def parser_versions(grammar_module: str) -> tuple[tuple[str, str], ...]:
    """tree-sitter's version and that of the wheel providing ``grammar_module``: the parsers that cut statements
    decide which examples exist as much as the toolchain does, so the build keys on them too."""
    from importlib import metadata

    grammar = (metadata.packages_distributions().get(grammar_module) or [grammar_module.replace("_", "-")])[0]
    found = []
    for dist in ("tree-sitter", grammar):
        try:
            found.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            continue
    return tuple(found)
