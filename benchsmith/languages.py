"""The languages benchsmith builds and scores: one lazy entry per analyzer class.

Adding a language is one line here (its name -> ``"benchsmith.analyzers.<module>:<Class>"``) next to the analyzer
module itself.  The table lives in the core package, not in ``analyzers/``, because ``records.Language`` is built
from its names and the core must not import ``analyzers`` (which imports the core): listing or parsing a language
imports no analyzer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchsmith.registry import Registry

if TYPE_CHECKING:
    from benchsmith.analyzers.base import Analyzer

# Declaration order is ``records.Language``'s member order: the paper's four languages first.
ANALYZERS: Registry[type["Analyzer"]] = Registry("language", {
    "python": "benchsmith.analyzers.python:PythonAnalyzer",
    "java": "benchsmith.analyzers.java:JavaAnalyzer",
    "typescript": "benchsmith.analyzers.typescript:TypeScriptAnalyzer",
    "csharp": "benchsmith.analyzers.csharp:CSharpAnalyzer",
    "javascript": "benchsmith.analyzers.javascript:JavaScriptAnalyzer",
    "go": "benchsmith.analyzers.go:GoAnalyzer",
}, aliases={"py": "python", "ts": "typescript", "c_sharp": "csharp", "c#": "csharp", "cs": "csharp",
            "js": "javascript", "golang": "go"})
