"""Per-language analyzers.  Which class serves which language is one lazy entry per language in
``benchsmith.languages.ANALYZERS`` (``"python": "benchsmith.analyzers.python:PythonAnalyzer"``): a new language is
its module (or package) here plus that one line; an analyzer module is imported only when its language is used."""

from __future__ import annotations

from benchsmith.analyzers.base import Analyzer, AnalyzerOptions, AnalysisResult, Diagnostic
from benchsmith.languages import ANALYZERS

__all__ = ["ANALYZERS", "Analyzer", "AnalyzerOptions", "AnalysisResult", "Diagnostic", "analyzer_class",
           "get_analyzer", "languages", "registry"]


def languages() -> list[str]:
    """Every language with an analyzer, sorted, without importing any analyzer."""
    return sorted(ANALYZERS)


def analyzer_class(language: str) -> type[Analyzer]:
    """The analyzer class for ``language`` (or an alias such as ``py``); ``UnknownName`` (a ``KeyError``) names
    the known languages and the closest match."""
    cls = ANALYZERS.load(language)
    if not (isinstance(cls, type) and issubclass(cls, Analyzer)) or cls.language != ANALYZERS.resolve(language):
        raise TypeError(f"registry entry {ANALYZERS[language]!r} for {language!r} is not an Analyzer "
                        f"whose language is {ANALYZERS.resolve(language)!r}")
    return cls


def registry() -> dict[str, type[Analyzer]]:
    """Language -> analyzer class for every language, sorted by name (this imports every analyzer module)."""
    return {name: analyzer_class(name) for name in languages()}


def get_analyzer(language: str, options: AnalyzerOptions | None = None) -> Analyzer:
    return analyzer_class(language)(options)
