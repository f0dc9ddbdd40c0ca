"""How a target's code uses its auxiliary: calls it (black-box), only names it (passes it along without a call,
e.g. ``key=aux`` or ``map(aux, xs)``), or not at all (white-box: re-implements what it needs).

When ``benchsmith.evaluate.style`` (the scorer's classifier of generated code) is installed it is used, so the
build report and the score report count the same way; this module's own rule is the fallback and documents it.
"""

from __future__ import annotations

import ast
from benchsmith.enums import StrEnum


class AuxUsage(StrEnum):
    CALLS = "calls"  # black-box: at least one call of the auxiliary
    REFERENCES_ONLY = "references_only"  # names it, never calls it
    NOT_USED = "not_used"


def auxiliary_usage(code: str, auxiliary_name: str) -> AuxUsage:
    """Classify ``code`` (a target function, or a program) by its use of ``auxiliary_name``."""
    shared = _shared_classifier()
    if shared is not None:
        return shared(code, auxiliary_name)
    return _own_usage(code, auxiliary_name)


def _own_usage(code: str, auxiliary_name: str) -> AuxUsage:
    tree = ast.parse(code)
    calls = 0
    loads = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == auxiliary_name:
            calls += 1
        elif isinstance(node, ast.Name) and node.id == auxiliary_name and isinstance(node.ctx, ast.Load):
            loads += 1
    if calls:
        return AuxUsage.CALLS
    if loads:
        return AuxUsage.REFERENCES_ONLY
    return AuxUsage.NOT_USED


def _shared_classifier():
    """Adapter to the scorer's classifier when present (its names may differ; map by value)."""
    try:
        from benchsmith.evaluate import style  # type: ignore[attr-defined]
    except ImportError:
        return None
    fn = getattr(style, "auxiliary_usage", None) or getattr(style, "classify", None)
    if fn is None:
        return None

    def adapt(code: str, name: str) -> AuxUsage:
        try:
            result = fn(code, name)
        except Exception:  # noqa: BLE001 - a different signature there: keep our own rule
            return _own_usage(code, name)
        value = str(getattr(result, "value", result)).lower()
        if "black" in value or value == "calls":
            return AuxUsage.CALLS
        if "reference" in value:
            return AuxUsage.REFERENCES_ONLY
        return AuxUsage.NOT_USED

    return adapt
