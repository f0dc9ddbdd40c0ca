"""What a registry says about one pinned release, as data: the record every registry module returns, the filters
read, and ``stats.json``, ``collection.jsonl`` and the card carry.

A registry source is written ``pypi:NAME[==VERSION]``, ``npm:NAME[@VERSION]`` or ``debian:SOURCE[=VERSION]``, each
optionally followed by ``#SUBDIR`` (the folder of the artifact that holds the sources)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchsmith.archives import SourceError
from benchsmith.enums import StrEnum
from benchsmith.records import Reason, Record


class RegistryKind(StrEnum):
    PYPI = "pypi"
    NPM = "npm"
    DEBIAN = "debian"


# What each registry accepts as a name and a version; anything else is refused before a request is made, and the
# same checks are applied to what a registry answers (a name or version it returns is untrusted too).
_NAME_RE = {
    RegistryKind.PYPI: re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?"),
    RegistryKind.NPM: re.compile(r"(?:@[a-z0-9][a-z0-9._~-]{0,100}/)?[a-z0-9][a-z0-9._~-]{0,100}"),
    RegistryKind.DEBIAN: re.compile(r"[a-z0-9][a-z0-9.+-]{1,99}"),
}
_VERSION_RE = {
    RegistryKind.PYPI: re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]{0,63}"),
    RegistryKind.NPM: re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.+-]{1,60})?"),
    RegistryKind.DEBIAN: re.compile(r"(?:[0-9]{1,5}:)?[0-9][A-Za-z0-9.+~-]{0,79}"),
}
_PIN_SEPARATOR = {RegistryKind.PYPI: "==", RegistryKind.NPM: "@", RegistryKind.DEBIAN: "="}
_SUBDIR_PART_RE = re.compile(r"[A-Za-z0-9._+@-]{1,100}")


def valid_name(kind: RegistryKind, name: str) -> bool:
    return bool(_NAME_RE[kind].fullmatch(name))


def valid_version(kind: RegistryKind, version: str) -> bool:
    return bool(_VERSION_RE[kind].fullmatch(version))


@dataclass(frozen=True)
class RegistrySpec:
    """A parsed registry source; ``version`` None pins the newest release when it is resolved."""

    kind: RegistryKind
    name: str
    version: str | None = None
    subdir: str | None = None

    @classmethod
    def parse(cls, text: str) -> "RegistrySpec | None":
        """None when ``text`` names no registry; ``SourceError`` (source_not_found) when it names one badly."""
        prefix, sep, rest = text.partition(":")
        try:
            kind = RegistryKind(prefix.lower())
        except ValueError:
            return None
        if not sep or "://" in text:
            return None
        rest, _, subdir = rest.partition("#")
        pin = _PIN_SEPARATOR[kind]
        if kind is RegistryKind.NPM:  # a scope starts with '@': the pin is an '@' after the first character
            tail, found, version = rest[1:].partition(pin)
            head = rest[:1] + tail
        else:
            head, found, version = rest.partition(pin)
        if not valid_name(kind, head):
            raise SourceError(Reason.SOURCE_NOT_FOUND, f"{text!r}: {head!r} is not a valid {kind} package name")
        if found and not valid_version(kind, version):
            raise SourceError(Reason.SOURCE_NOT_FOUND, f"{text!r}: {version!r} is not a valid {kind} version")
        if subdir and not valid_subdir(subdir):
            raise SourceError(Reason.SOURCE_NOT_FOUND, f"{text!r}: #{subdir} is not a relative folder of plain "
                              "names")
        return cls(kind, head, version if found else None, subdir or None)

    def pinned(self, version: str) -> "RegistrySpec":
        return RegistrySpec(self.kind, self.name, version, self.subdir)

    def text(self) -> str:
        """The source as a repos file line (the pin included when there is one)."""
        out = f"{self.kind}:{self.name}"
        if self.version:
            out += f"{_PIN_SEPARATOR[self.kind]}{self.version}"
        return out + (f"#{self.subdir}" if self.subdir else "")

    def repo_id(self) -> str:
        """A filesystem-safe repository id: ``pypi-attrs-25.4.0``, ``npm-scope__pkg-1.0.0``."""
        base = f"{self.kind}-{self.name.lstrip('@').replace('/', '__')}"
        if self.version:
            base += f"-{self.version.replace(':', '_')}"
        if self.subdir:
            base += "-" + self.subdir.replace("/", "_")
        return re.sub(r"[^A-Za-z0-9._@-]+", "_", base)


def valid_subdir(subdir: str) -> bool:
    parts = subdir.split("/")  # not PurePosixPath: it would drop "." and empty parts before they are seen
    return 0 < len(parts) <= 16 and all(p not in (".", "..") and _SUBDIR_PART_RE.fullmatch(p) for p in parts)


@dataclass
class RegistryRelease(Record):
    """One pinned release as its registry describes it (dates are ISO-8601 UTC strings)."""

    registry: str  # a RegistryKind value
    name: str
    version: str
    released: str | None  # when this version's artifact was published
    first_released: str | None  # the package's earliest published release
    license_declared: str | None  # what the registry's metadata says, bounded
    license_spdx: str | None  # that, normalised to an SPDX expression where it can be
    homepage: str | None
    repository: str | None
    artifact_url: str
    artifact_name: str
    digest: str  # "sha256:<hex>", "sha512:<hex>" or "sha1:<hex>": what the registry publishes, checked on download
    size: int | None = None  # bytes, when the registry states it

    def source(self, subdir: str | None = None) -> str:
        return RegistrySpec(RegistryKind(self.registry), self.name, self.version, subdir).text()
