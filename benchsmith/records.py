"""Typed records the core passes between pipeline steps: languages, sources, checkouts, cross-file references and
exclusions.  A benchmark family's own records live with it (``builders/cceval/records.py``;
``evaluate/humanext/records.py``, which the HumanExtension builder and scorer both read).

Every record is a dataclass that round-trips through JSON (``to_dict``/``from_dict``) so shards can be written,
resumed and merged.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any
from benchsmith.enums import StrEnum
from benchsmith.languages import ANALYZERS
from benchsmith.reasons import Reason, Stage  # noqa: F401 - the drop vocabulary, read through records everywhere


class _LanguageBase(StrEnum):
    @classmethod
    def parse(cls, name: str) -> "Language":
        """A language from its name or a common alias (py, ts, c#, js, golang ...); an error names the known ones."""
        key = name.strip().lower()
        try:
            return cls(ANALYZERS.resolve(key))
        except ValueError:
            known = ", ".join(m.value for m in cls)
            raise ValueError(f"unsupported language {name!r}; benchsmith knows {known}") from None


# One member per analyzer registry entry (``Language.PYTHON == "python"`` ...), built from the entry names alone:
# a new language is its registry line, and nothing here imports an analyzer.
Language = ANALYZERS.enum("Language", _LanguageBase, __name__)


def _plain(value: Any) -> Any:
    """Turn dataclasses/enums into JSON-ready values (dict order = field order, so output is stable)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class Record:
    """Mixin: JSON round trip for flat-ish dataclasses."""

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class RepoSpec(Record):
    """What the user asked for: a local path, a git URL (optionally ``URL@COMMIT``) or an archive."""

    source: str
    commit: str | None = None
    name: str | None = None

    @classmethod
    def parse(cls, text: str) -> "RepoSpec":
        """``URL@COMMIT`` pins a commit; an ``@`` before the last ``/`` (``git@host:org/repo``) is not a pin."""
        text = text.strip()
        last = text.rsplit("/", 1)[-1]
        is_remote = "://" in text or text.startswith("git@")
        if is_remote and "@" in last:
            head, _, commit = text.rpartition("@")
            if commit:
                return cls(source=head, commit=commit)
        return cls(source=text)


@dataclass
class Checkout(Record):
    """A repository materialised on disk (read-only from our side)."""

    spec: RepoSpec
    name: str  # stable repository id used in task ids and shard names
    path: str
    commit: str | None = None
    license: str | None = None
    created: str | None = None  # ISO date of the first commit, when known
    kind: str = "directory"  # directory | git | archive | registry
    # a registry source: its RegistryRelease (benchsmith.registries.metadata); ``created`` is then its first
    # release, and the licence filter reads the registry's declared licence
    release: Any = None
    # What materialising left out (archive members over budget, links, duplicates): recorded, never silent.
    exclusions: list[Exclusion] = field(default_factory=list)


class ReferenceKind(StrEnum):
    """What kind of cross-file use a reference is: one vocabulary for every language (``metadata.reference_kind``,
    ``--kinds``).  The name at the reference's position is the API defined in another file of the repository."""

    MEMBER = "member"  # a member access or call on a cross-file value or type: ``obj.api(...)``, ``Util.api``
    INHERITED_MEMBER = "inherited_member"  # a member reached through self/this or a subclass, defined in a base
    TYPE = "type"  # a type reference: annotations, declarations, generic arguments, casts, typeof/nameof/instanceof
    HERITAGE = "heritage"  # extends / implements / a C# base list
    ATTRIBUTE = "attribute"  # an attribute, annotation or decorator
    CONSTRUCTOR = "constructor"  # ``new T(...)``, qualified chains included
    MODULE_MEMBER = "module_member"  # a submodule reached through its package, a name re-exported by a module
    JSX = "jsx"  # a JSX element naming a cross-file component


class CursorPlace(StrEnum):
    """Where in its line an example's cursor sits (``metadata.cursor_place``), as ``bench/released.py`` compares
    it with the released benchmark: at the line's start (its first token, or column 0), right after a ``.``, or
    at another place before the cross-file name (the name itself when it follows neither)."""

    LINE_START = "line_start"
    AFTER_DOT = "after_dot"
    ELSEWHERE = "elsewhere"


@dataclass
class Definition(Record):
    """Where the API a reference needs is defined: a file of the repository and its 0-based line range."""

    file: str
    start_line: int
    end_line: int
    symbol: str


@dataclass
class CrossFileRef(Record):
    """A use of a name defined in another file of the same repository (0-based line, 0-based column)."""

    file: str  # path relative to the repository root, '/'-separated
    line: int
    column: int
    symbol: str
    import_name: str  # the local name bound by the import (or the project type named)
    defining_file: str | None
    diagnostic: str = ""  # the toolchain's code/message that revealed it (E1101, cannot find symbol, TS2339 ...)
    message: str = ""
    kind: ReferenceKind = ReferenceKind.MEMBER
    # the declaration the use needs, where it is known (the analyzer, or analyzers/definitions.py after it)
    definition: Definition | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CrossFileRef":
        ref = super().from_dict(data)
        ref.kind = ReferenceKind(ref.kind)
        if isinstance(ref.definition, dict):
            ref.definition = Definition.from_dict(ref.definition)
        return ref


@dataclass
class Exclusion(Record):
    """A dropped item and why.  ``detail`` is human-readable; ``reason`` is the stable key counted in stats."""

    item_id: str
    stage: Stage
    reason: Reason
    detail: str = ""
    repository: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Exclusion":
        return cls(
            item_id=data["item_id"],
            stage=Stage(data["stage"]),
            reason=Reason(data["reason"]),
            detail=data.get("detail", ""),
            repository=data.get("repository", ""),
        )
