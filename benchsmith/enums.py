"""One base for the project's string enums: they print, format and serialise as their value, so CLIs, rich tables
and JSON show ``python``, not ``Language.PYTHON``."""

from __future__ import annotations

import enum


class StrEnum(str, enum.Enum):
    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)
