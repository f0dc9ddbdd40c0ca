"""The down-level pass: C# 8-12 rewritten into the C# 7 that mcs reads, keeping every name, member and type the
compiler sees, with an exact map of each edit back to the original text (``edits``: the result and its map;
``rules``: the rules, one module per family of constructs)."""

from benchsmith.analyzers.csharp.downlevel.edits import (HELPER, HELPER_FILE, HELPER_SOURCE, HELPER_SOURCES,
                                                         Construct, DownlevelResult, Edit, Unsupported, apply_edits,
                                                         downlevel, extract_global_usings)

__all__ = ["HELPER", "HELPER_FILE", "HELPER_SOURCE", "HELPER_SOURCES", "Construct", "DownlevelResult", "Edit",
           "Unsupported", "apply_edits", "downlevel", "extract_global_usings"]
