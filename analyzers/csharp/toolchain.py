"""What the builder asks of the C# analyzer besides the analysis: the project files it reads as data, the bytes
tree-sitter reads for a file, the toolchain's paths and versions (a mixin of ``CSharpAnalyzer``: it reads its
``mcs``, ``_backend`` and ``_references``)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from benchsmith.analyzers.csharp.compile import mcs_version
from benchsmith.analyzers.csharp.diagnostics import Compiler
from benchsmith.analyzers.csharp.preprocess import preprocess
from benchsmith.analyzers.csharp.project import (DEFAULT_DEFINES, PROJECT_FILES, PROJECT_SUFFIX,
                                                 UNITY_ASSEMBLY_SUFFIX, UNITY_VERSION_FILE)
from benchsmith.files import read_data_files
from benchsmith.runner import which


class CsToolchain:
    @classmethod
    def read_configs(cls, repo, max_bytes: int = 1_000_000, max_files: int = 200) -> dict[str, str]:
        """``{relative path: text}`` of the repository's ``*.csproj`` and ``Directory.Build.props`` (data: their
        unconditional defines, target frameworks and implicit usings; msbuild never runs), and of Unity's
        ``*.asmdef`` and ``ProjectVersion.txt`` (which say the Unity symbols apply), without following symlinks."""
        def wanted(name: str) -> bool:
            return name.lower().endswith((PROJECT_SUFFIX, UNITY_ASSEMBLY_SUFFIX)) or name in PROJECT_FILES \
                or name == UNITY_VERSION_FILE.rsplit("/", 1)[-1]

        return read_data_files(repo, wanted,
                               prune=lambda d: d.startswith(".") or d in ("bin", "obj"),
                               max_bytes=max_bytes, max_files=max_files)

    def tree_source(self, path: str, text: str) -> bytes:
        """The bytes tree-sitter should parse for ``text``: the preprocessed file (inactive ``#if`` branches and
        directive lines blanked), whose byte offsets are the original's, with the default symbols; an analysis
        gives its own, with the project's symbols, in ``AnalysisResult.tree_views``."""
        return preprocess(text, DEFAULT_DEFINES).tree_bytes()

    def toolchain_paths(self) -> list[str]:
        # a dotnet install usually lives outside /usr (~/.dotnet, /opt/dotnet, /usr/local/share/dotnet): its host,
        # SDK (csc.dll) and reference packs must be in the confined view; mono's mcs lives under /usr
        kind, roslyn = self._backend()
        if kind is Compiler.CSC and roslyn is not None:
            return [str(Path(os.path.realpath(roslyn.dotnet)).parent)]
        return []

    def tool_versions(self) -> dict[str, str]:
        kind, roslyn = self._backend()
        if kind is Compiler.CSC and roslyn is not None:
            return {"csc": PurePosixPath(roslyn.csc_dll).parent.parent.parent.name}
        v = mcs_version(self.mcs, which(self.mcs) or "")
        out = {"mcs": v} if v else {}
        refs = self._references()
        if refs:
            out["mcs_references"] = ",".join(refs)  # what this machine's mono has: part of the toolchain
        return out
