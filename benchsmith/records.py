"""Typed records that flow between pipeline steps.

Every record is a dataclass that round-trips through JSON (``to_dict``/``from_dict``) so shards can be written,
resumed and merged.  ``CompletionExample.to_dict`` emits exactly the CrossCodeEval schema; benchsmith's own extras
live under ``metadata`` so the files stay drop-in for the original evaluation scripts.
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


class CursorRule(StrEnum):
    """``--cursor``: where a build puts the cursor of each reference's example."""

    NAME = "name"  # right before the cross-file name
    RELEASED = "released"  # as the released CrossCodeEval places it, per language (Analyzer.released_cursor)


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
class RetrievedChunk(Record):
    retrieved_chunk: str
    filename: str
    score: float


@dataclass
class CrossFileContext(Record):
    text: str = ""
    list: list[RetrievedChunk] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CrossFileContext":
        return cls(text=data.get("text", ""), list=[RetrievedChunk.from_dict(c) for c in data.get("list", [])])


@dataclass
class ExampleMetadata(Record):
    task_id: str
    repository: str
    file: str
    context_start_lineno: int
    groundtruth_start_lineno: int
    right_context_start_lineno: int
    # benchsmith extras (CrossCodeEval ignores unknown metadata keys)
    language: str = ""
    symbol: str = ""
    defining_file: str | None = None
    diagnostic: str = ""
    commit: str | None = None
    groundtruth_tokens: int | None = None
    reference_kind: str = ""  # a ReferenceKind value
    definition: dict[str, Any] | None = None  # Definition.to_dict() of the API the groundtruth needs
    cursor_place: str = ""  # a CursorPlace value: where in its line the prompt ends
    # retrieval variants only: the 0-based [first, last] line of each crossfile_context chunk in its file (the
    # chunks themselves keep CrossCodeEval's three fields), which tells whether retrieval found the definition
    retrieved_lines: list[list[int]] | None = None
    # {"surprisal": bits per groundtruth token under an n-gram model of the prompt, "screens": the model-free
    # screens that fire on it} (builders/cceval/screens.py predictability), so a user can pick a stricter cut
    predictability: dict[str, Any] | None = None
    # --cursor released only: the scorer modes (``compat-cceval``) that cannot give an exact copy of this groundtruth full
    # marks, as in the released benchmark (builders/cceval/filters.ScorableGroundtruth)
    unscorable_modes: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        for key in ("retrieved_lines", "predictability", "unscorable_modes"):
            if out.get(key) is None:
                out.pop(key, None)
        return out


@dataclass
class CompletionExample(Record):
    prompt: str
    groundtruth: str
    right_context: str
    metadata: ExampleMetadata
    crossfile_context: CrossFileContext | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prompt": self.prompt,
            "groundtruth": self.groundtruth,
            "right_context": self.right_context,
            "metadata": self.metadata.to_dict(),
        }
        if self.crossfile_context is not None:
            out["crossfile_context"] = self.crossfile_context.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CompletionExample":
        ctx = data.get("crossfile_context")
        return cls(
            prompt=data["prompt"],
            groundtruth=data["groundtruth"],
            right_context=data["right_context"],
            metadata=ExampleMetadata.from_dict(data["metadata"]),
            crossfile_context=CrossFileContext.from_dict(ctx) if ctx is not None else None,
        )

    @property
    def task_id(self) -> str:
        return self.metadata.task_id


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


@dataclass
class FunctionPair(Record):
    """One HumanExtension pair: an auxiliary function and a target function that can use it."""

    pair_id: str
    imports: list[str]  # import lines, e.g. "from typing import List"
    auxiliary_name: str
    auxiliary_source: str
    target_name: str
    target_signature: str  # def line + docstring, what the model sees
    target_reference: str  # full reference implementation of the target
    tests: str  # check(candidate) + call
    extra: dict[str, Any] = field(default_factory=dict)


class Setting(StrEnum):
    DIRECT = "direct"
    IRRELEVANT = "irrelevant"
    ORACLE = "oracle"
    STEP_BY_STEP = "step_by_step"
    MULTI_AUXILIARY = "multi_auxiliary"


class Perturbation(StrEnum):
    NONE = "none"
    RENAMED = "renamed"
    NO_DOCSTRING = "no_docstring"
    RENAMED_LOCALS = "renamed_locals"
    DOCSTRING_AS_COMMENTS = "docstring_as_comments"
    DEAD_CODE = "dead_code"


@dataclass
class PromptVariant(Record):
    task_id: str
    pair_id: str
    setting: Setting
    perturbation: Perturbation
    prompt: str
    stop: list[str]
    entry_point: str
    auxiliary_name: str
    tests: str
    imports: list[str]
    position: int | None = None
    num_auxiliary: int | None = None
    sample_index: int = 0
    seed: int | None = None
    stage: int | None = None  # step_by_step: 1 = write the auxiliary, 2 = template for the target
    template: str | None = None  # step_by_step stage 2: prompt with "{auxiliary}" to fill
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PromptVariant":
        rec = super().from_dict(data)
        rec.setting = Setting(rec.setting)
        rec.perturbation = Perturbation(rec.perturbation)
        return rec
