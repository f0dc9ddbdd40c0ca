"""The options of a CrossCodeEval build, on top of what every per-repository build is given."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchsmith.builders.cceval.filters import ExampleFilterConfig
from benchsmith.builders.cceval.screens import ScreenProfile
from benchsmith.records import ReferenceKind
from benchsmith.builders.cceval.records import CursorRule
from benchsmith.repobuild.config import RepoBuildConfig


@dataclass
class BuildConfig(RepoBuildConfig):
    example_filters: ExampleFilterConfig = ExampleFilterConfig()
    screens: ScreenProfile = ScreenProfile.DEFAULT  # model-free predictability screens (builders/cceval/screens.py)
    retrievers: tuple[str, ...] = ("bm25",)
    retrieval: dict[str, Any] = field(default_factory=dict)  # extra RetrievalConfig fields
    max_per_repo: int | None = None
    first_reference_per_statement: bool = False  # the earlier cutting rule (ExampleCutter.first_per_statement)
    cursor: CursorRule = CursorRule.NAME  # --cursor: at the name, or where the released benchmark puts it
    kinds: tuple[ReferenceKind, ...] | None = None  # --kinds: the reference kinds cut (None: all)
