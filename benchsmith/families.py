"""Benchmark families: every benchmark benchsmith builds is one entry of ``FAMILIES``, and the core (the
per-repository runner, export, the CLI, the card's discovery of splits) iterates over the entries instead of
naming a benchmark.

A family owns what makes it a benchmark: its records and reasons (in its own package), where its files go under
a build's ``DIR`` (``SplitFiles``), the Hugging Face schema its splits start from and the check each record must
pass on export, its CLI commands, and, for a family built per repository (``benchsmith.repobuild``), the steps it
adds after the core ones (checkout, snapshot, repository filters, analysis) and the writers that turn what those
steps yield into files.  Adding a benchmark is a new entry with its steps and writers
(``FAMILIES.register(name, "module:attr")``); nothing of the core is copied or edited.

Entries are strings, loaded when used (``benchsmith.registry``), so listing the families imports nothing heavy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Iterator

from benchsmith import layout
from benchsmith.registry import Registry

if TYPE_CHECKING:
    from benchsmith.pipeline import DropLedger, Observer, Step
    from benchsmith.repobuild.config import RepoBuildConfig
    from benchsmith.repobuild.repository import Repository


@dataclass(frozen=True)
class SplitFiles:
    """Where a family's split files sit under a build's ``DIR``: ``DIR/<folder>/<glob>``, or, with ``folder`` None,
    ``DIR/<language>/<glob>`` for every language folder."""

    folder: str | None
    glob: str


class Writer:
    """Turns each item the family's last step yields into records of one or more JSONL files of a shard
    (``records`` gives ``(file stem, record or None)``: None names a file without adding to it, so the file
    exists even when empty).  ``required`` stems are written even when no item reaches the writer."""

    required: tuple[str, ...] = ()

    def records(self, item: Any) -> Iterable[tuple[str, Any]]:  # pragma: no cover - interface
        raise NotImplementedError

    def written(self, stem: str, record: Any) -> None:
        """Called after each record is written (a writer that tallies what it wrote overrides it)."""

    def stats(self, ok: bool) -> dict[str, Any]:
        """What this writer adds to the shard's stats.json, after the core keys (``ok`` False: the repository's
        task failed and its files were emptied)."""
        return {}


class BenchmarkFamily:
    """One benchmark.  Class attributes describe it; the methods are what the per-repository runner calls."""

    name: ClassVar[str]
    files: ClassVar[SplitFiles]
    schema: ClassVar[Any] = ("dict", {})  # the json_types tree every split's Features start from
    # CLI commands of this family: "build x" -> ("module with add_arguments/run", "one help line")
    commands: ClassVar[dict[str, tuple[str, str]]] = {}

    def check_record(self, record: dict) -> None:
        """Raise ``json_types.SchemaError`` for a record that is not one of this family's (on export)."""

    # -- per-repository families ---------------------------------------------------------------------------
    def steps(self, repo: "Repository", ledger: "DropLedger", observer: "Observer | None") -> list["Step"]:
        """The steps after the core repository steps: they consume the analysed repository."""
        raise NotImplementedError(f"{self.name} is not built per repository")

    def writers(self, config: "RepoBuildConfig") -> list[Writer]:
        raise NotImplementedError(f"{self.name} is not built per repository")

    def split_stats(self, out: Path, shards: list[Path], config: "RepoBuildConfig") -> dict[str, Any]:
        """What the family adds to the merged stats.json, after the core keys."""
        return {}

    # -- discovery -----------------------------------------------------------------------------------------
    def split_paths(self, root: Path) -> Iterator[tuple[str, Path]]:
        """(group, path) of every split file of this family under a build's ``root``, in a stable order; the
        group is the language folder, or the family's folder."""
        if self.files.folder is not None:
            folder = root / self.files.folder
            if folder.is_dir():
                for path in sorted(folder.glob(self.files.glob)):
                    yield self.files.folder, path
            return
        for lang_dir in sorted(p for p in root.iterdir() if is_language_dir(p)):
            for path in sorted(lang_dir.glob(self.files.glob)):
                yield lang_dir.name, path


FAMILIES: Registry[BenchmarkFamily] = Registry("benchmark family", {
    "cceval": "benchsmith.builders.cceval.family:FAMILY",
    "humanext": "benchsmith.builders.humanext.family:FAMILY",
})


def families() -> list[BenchmarkFamily]:
    return [FAMILIES.load(name) for name in FAMILIES.names()]


def fixed_folders() -> frozenset[str]:
    """The folders of ``DIR`` that a family owns by name (never a language's)."""
    return frozenset(f.files.folder for f in families() if f.files.folder is not None)


# Folders of DIR that hold views of the splits (benchsmith.export, the card's figures), never a split itself.
VIEW_FOLDERS = frozenset({layout.HF_DIR, layout.PARQUET_DIR, layout.FIGURES_DIR})


def is_language_dir(path: Path) -> bool:
    """A folder of ``DIR`` that may hold a language's split: not a view folder, not a family's own folder, not
    hidden."""
    name = os.path.basename(path)
    return path.is_dir() and name not in VIEW_FOLDERS and name not in fixed_folders() and not name.startswith(".")
