"""Values read from a repository's configuration (csproj, Directory.Build.props, tsconfig, go.mod), checked against
the grammar of what each must be before it may reach a tool's argv, response file, generated config or source.

A value that fails is refused -- never repaired, never passed on -- and kept as a ``Rejection`` that the analyzer
records (``Reason.CONFIG_VALUE_REJECTED``, the detail naming the file's key and value).  A whole file past a parsing
cap (its size, nesting depth or element count) is refused the same way with ``Reason.CONFIG_TOO_LARGE``.  The
grammars are anchored regexes without nested quantifiers over length-capped text: linear, whatever the input.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Iterable

from benchsmith.enums import StrEnum
from benchsmith.records import Exclusion, Reason, Stage

# Parsing caps for one configuration file.  read_data_files already stops at 1 MB; these hold for any caller.
MAX_CONFIG_CHARS = 1_000_000
MAX_DEPTH = 64  # XML elements or JSON arrays/objects inside one another (real files: under 10)
MAX_ELEMENTS = 100_000  # XML elements of one project file (a large old-style csproj lists a few thousand)
MAX_VALUE_CHARS = 1024  # one symbol, moniker, namespace or path
MAX_LIST_VALUES = 1000  # entries of one list setting (usings, symbols, frameworks) of one file
# a file's rejections are recorded as one exclusion naming the first few: a hostile file with 100k bad values
# costs one record, not 100k
SHOWN_PER_FILE = 5


class ValueKind(StrEnum):
    """What a configuration value must be; the value is the phrase the detail uses."""

    FRAMEWORK_MONIKER = "target framework moniker"
    PREPROCESSOR_SYMBOL = "C# preprocessor symbol name"
    NAMESPACE = "C# namespace name"
    EDITOR_VERSION = "Unity editor version"
    REPO_PATH = "path inside the repository"
    PATH_PATTERN = "module name pattern (at most one '*')"
    MODULE_PATH = "Go module path"


# netstandard2.0, net6.0-windows10.0.19041.0, net48, net40-client, portable-net45+win8+wpa81, uap10.0.16299
_MONIKER = re.compile(r"[A-Za-z][A-Za-z0-9.]{0,63}(?:-[A-Za-z0-9.+]{1,63})?")
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,511}")
_NAMESPACE = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")
# golang.org/x/mod/module's import path elements: ASCII letters, digits and -._~+, no leading or trailing dot
_GO_ELEMENT = re.compile(r"[A-Za-z0-9_~+\-](?:[A-Za-z0-9._~+\-]*[A-Za-z0-9_~+\-])?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def is_framework_moniker(value: str) -> bool:
    return _MONIKER.fullmatch(value) is not None


def is_preprocessor_symbol(value: str) -> bool:
    # `true` and `false` are the literals of an #if expression, never a symbol
    return _SYMBOL.fullmatch(value) is not None and value not in ("true", "false")


def is_namespace(value: str) -> bool:
    return len(value) <= MAX_VALUE_CHARS and _NAMESPACE.fullmatch(value) is not None


def is_go_module_path(value: str) -> bool:
    if not value or len(value) > MAX_VALUE_CHARS or value.startswith("-"):
        return False
    return all(_GO_ELEMENT.fullmatch(e) is not None for e in value.split("/"))


def is_path_pattern(value: str) -> bool:
    return 0 < len(value) <= MAX_VALUE_CHARS and value.count("*") <= 1 and not _CONTROL.search(value)


def repo_path(base: str, value: str) -> str | None:
    """``value`` (relative to the repository directory ``base``) as a normalised repository path ('' for the root),
    or None when it is not one: absolute, leaving the tree, too long, or holding a control character."""
    if not isinstance(value, str) or len(value) > MAX_VALUE_CHARS or _CONTROL.search(value) or value.startswith("/"):
        return None
    rel = posixpath.normpath(posixpath.join(base, value))
    if rel == ".":
        return ""
    if rel == ".." or rel.startswith(("../", "/")):
        return None
    return rel


def shown(value: object, limit: int = 80) -> str:
    """A value as a detail shows it: quoted and escaped (no control character reaches a log), at most ``limit``."""
    text = value if isinstance(value, str) else repr(value)
    cut = text[:limit]
    return ascii(cut) + (f" (+{len(text) - limit} chars)" if len(text) > limit else "")


@dataclass(frozen=True)
class Rejection:
    """One refused value (or a whole file past a cap) of a configuration file."""

    config: str  # the file, relative to the repository root
    key: str  # the setting, as the file names it (``TargetFramework``, ``compilerOptions.paths``)
    value: str  # the offending value, already ``shown`` (or what cap was passed)
    expected: ValueKind | None = None  # None: the whole file was refused (``reason`` says why)
    reason: Reason = Reason.CONFIG_VALUE_REJECTED

    @classmethod
    def of(cls, config: str, key: str, value: object, expected: ValueKind) -> "Rejection":
        return cls(config, key, shown(value), expected)

    @classmethod
    def too_large(cls, config: str, what: str) -> "Rejection":
        return cls(config, "", what, None, Reason.CONFIG_TOO_LARGE)

    def describe(self) -> str:
        if self.expected is None:
            return f"{self.value}; refused"
        return f"{self.key} = {self.value} is not a {self.expected}; refused"


def exclusions(repo: str, rejections: Iterable[Rejection]) -> list[Exclusion]:
    """One exclusion per (file, reason), in first-seen order, naming the first few rejections and how many more."""
    grouped: dict[tuple[str, Reason], list[Rejection]] = {}
    for r in rejections:
        grouped.setdefault((r.config, r.reason), []).append(r)
    out = []
    for (config, reason), rs in grouped.items():
        unique = list(dict.fromkeys(r.describe() for r in rs))
        detail = "; ".join(unique[:SHOWN_PER_FILE])
        if len(unique) > SHOWN_PER_FILE:
            detail += f"; and {len(unique) - SHOWN_PER_FILE} more"
        out.append(Exclusion(f"{repo}/{config}", Stage.ANALYZER, reason, detail, repo))
    return out
