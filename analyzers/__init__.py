"""Per-language analyzers.  The registry discovers every ``Analyzer`` subclass defined in a module of this
package, so a new language is a new module and nothing else."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from benchsmith.analyzers.base import Analyzer, AnalyzerOptions, AnalysisResult, Diagnostic

__all__ = ["Analyzer", "AnalyzerOptions", "AnalysisResult", "Diagnostic", "get_analyzer", "registry"]


@lru_cache(maxsize=None)
def registry() -> dict[str, type[Analyzer]]:
    found: dict[str, type[Analyzer]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Analyzer)
                and obj is not Analyzer
                and (obj.__module__ == module.__name__ or obj.__module__.startswith(module.__name__ + "."))
                and getattr(obj, "language", None)
            ):
                found[obj.language] = obj
    return found


def get_analyzer(language: str, options: AnalyzerOptions | None = None) -> Analyzer:
    reg = registry()
    if language not in reg:
        raise KeyError(f"no analyzer for language {language!r}; available: {', '.join(sorted(reg))}")
    return reg[language](options)
