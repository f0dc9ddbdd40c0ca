"""HumanExtension as a benchmark family (``benchsmith.families``): its folder of a build's ``DIR`` and its
commands.  It is built from its pairs, not per repository (``build.py``), so it has no repository steps."""

from __future__ import annotations

from benchsmith import layout
from benchsmith.families import BenchmarkFamily, SplitFiles


class HumanExtension(BenchmarkFamily):
    name = "humanext"
    files = SplitFiles(folder=layout.HUMANEXT_DIR, glob="*.jsonl")
    commands = {
        "build humanext": ("benchsmith.builders.humanext.command", "build HumanExtension prompt variants"),
        "score humanext": ("benchsmith.evaluate.humanext.command", "execute and score HumanExtension predictions"),
    }


FAMILY = HumanExtension()
