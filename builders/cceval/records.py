"""CrossCodeEval's records: an example as the released schema has it (``CompletionExample.to_dict`` emits exactly
that schema; benchsmith's own extras live under ``metadata`` so the files stay drop-in for the original evaluation
scripts), its retrieved context, and ``CursorRule`` (``--cursor``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchsmith.enums import StrEnum
from benchsmith.records import Record


class CursorRule(StrEnum):
    """``--cursor``: where a build puts the cursor of each reference's example."""

    NAME = "name"  # right before the cross-file name
    RELEASED = "released"  # as the released CrossCodeEval places it, per language (Analyzer.released_cursor)


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
    # the groundtruth scored as its own prediction, once, by the scorability filter; the shard's self-consistency
    # reuses it (never written: to_dict is the schema)
    self_scores: list[Any] | None = field(default=None, repr=False, compare=False)

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
