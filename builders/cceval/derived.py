"""Everything derived from a finished split, written by one function the build and ``benchsmith screen`` share.

A split (``DIR/<lang>/line_completion*.jsonl`` with its ``stats.json``) is the source of truth; ``audit.json``, the
dataset card ``DIR/README.md`` (with its figures), ``DIR/hf/`` and ``DIR/parquet/`` are views of it.  Whoever
changes a split calls ``write_derived`` afterwards, so no view is ever left describing examples that are gone.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Iterable, Sequence

from benchsmith.export import OutputFormat
from benchsmith.layout import CARD_FILE, HF_DIR, PARQUET_DIR
_COMMAND_BLOCK = re.compile(r"^## How it was built\n\n```bash\n(?P<cmd>.*?)\n```", re.MULTILINE | re.DOTALL)


def write_derived(out_dir: str | os.PathLike, *, command: Sequence[str] | None, formats: Iterable[str] = ("jsonl",),
                  card: bool = True, tool_versions: dict | None = None, push_to_hub: str | None = None,
                  language_dirs: Iterable[str | os.PathLike] | None = None) -> None:
    """Audit each language directory (``language_dirs``, default every split under ``out_dir``), then the card
    (before any push: the hub copy carries it), then the hf/parquet formats asked for."""
    from benchsmith.builders.cceval.audit import write_audits

    for target in (list(language_dirs) if language_dirs is not None else [out_dir]):
        write_audits(target, reuse_stats=True)  # each split's stats.json is fresh: its self-check is reused
    if card:
        from benchsmith.builders.cceval.card import write_card

        write_card(out_dir, command=list(command or []), tool_versions=tool_versions or {})
    formats = {f.strip() for f in formats if f.strip()}
    if formats - {OutputFormat.JSONL.value} or push_to_hub:
        from benchsmith.export import write_outputs

        write_outputs(out_dir, formats=formats, push_to_hub=push_to_hub)


def recorded_command(out_dir: str | os.PathLike) -> list[str] | None:
    """The build command the existing card records (None without a card or a recorded command)."""
    try:
        text = (Path(out_dir) / CARD_FILE).read_text(encoding="utf-8")
    except OSError:
        return None
    m = _COMMAND_BLOCK.search(text)
    if m is None or m.group("cmd") == "(command not recorded)":
        return None
    try:
        return shlex.split(m.group("cmd"))
    except ValueError:
        return None


def rewrite_derived(language_dir: str | os.PathLike) -> None:
    """After a split under ``DIR/<lang>`` changed in place: rewrite the views that exist (the card keeps the
    build's recorded command; hf/ and parquet/ are rewritten only when the build wrote them)."""
    lang = Path(language_dir)
    root = lang.parent
    views = ((OutputFormat.HF, HF_DIR), (OutputFormat.PARQUET, PARQUET_DIR))
    formats = [OutputFormat.JSONL.value] + [f.value for f, d in views if (root / d).is_dir()]
    has_card = (root / CARD_FILE).is_file()
    write_derived(root, command=recorded_command(root) if has_card else None, formats=formats, card=has_card,
                  language_dirs=[lang])
