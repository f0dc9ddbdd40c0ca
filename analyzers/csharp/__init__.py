"""C#: the analyzer (``CSharpAnalyzer``) and its parts, one module per job; see ``analyzer`` for how they fit."""

from benchsmith.analyzers.csharp.analyzer import CSharpAnalyzer
from benchsmith.analyzers.csharp.diagnostics import Compiler

__all__ = ["CSharpAnalyzer", "Compiler"]
