"""One analysis under way: the analysed copies, the scan, the stub plans and the two trees on disk, with the
shim both trees share; what ``CSharpAnalyzer``'s recipe steps hand each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.analyzers.csharp.compile import CompileOutcome
from benchsmith.analyzers.csharp.copy import Prepared
from benchsmith.analyzers.csharp.diagnostics import Compiler
from benchsmith.analyzers.csharp.roslyn import Roslyn
from benchsmith.analyzers.csharp.scan import CsFileInfo, CsType
from benchsmith.analyzers.csharp.shim import SHIM_FILE, Shim
from benchsmith.analyzers.csharp.stubs import CsStubs, plan_all_stubs
from benchsmith.files import write_tree

__all__ = ["SHIM_FILE", "CsPlan"]


@dataclass
class CsPlan:
    repo: str
    kind: Compiler
    roslyn: Roslyn | None
    workdir: Path
    usable: dict[str, str]  # the snapshot's files as they are (references and cuts are made on these)
    prepared: Prepared
    texts: dict[str, str]  # the analysed copies both compiles see
    infos: dict[str, CsFileInfo]
    compiled: set[str]
    plans: dict[str, CsStubs]
    known: set[str]
    project_ns: set[str]
    shim: Shim = field(default_factory=Shim)
    dropped: set[str] | None = None  # files whose stubs are left out (found by recompiles)
    # stubs left out, as (top-level type, stub name): predicted, then named by a recompile's errors
    left_out: frozenset[tuple[str, str]] = frozenset()
    written: dict[Path, dict[str, str]] = field(default_factory=dict)
    # the rounds' outcome: the original tree's last compile, and the stubbed tree's of the same round
    before: CompileOutcome | None = None
    after: CompileOutcome | None = None
    parse_pending: bool = False  # the parse pass waits for the first compile (``parse_check``)
    stubbed_files: list[str] = field(default_factory=list)
    rounds: int = 0
    rejects: int = 0  # rounds compiled again without files mcs rejects or crashes on
    crashes: int = 0
    # attribution
    types_by_name: dict[str, list[CsType]] = field(default_factory=dict)
    mentions: dict = field(default_factory=dict)
    new: int = 0
    unattributed: int = 0
    external: int = 0

    @property
    def orig_tree(self) -> Path:
        return self.workdir / "original"

    @property
    def stub_tree(self) -> Path:
        return self.workdir / "stubbed"

    @property
    def order(self) -> list[str]:
        return sorted(self.compiled)

    def restart_stubs(self) -> None:
        """The stubs planned anew after ``compiled`` changed: none left out yet, for the blocker prediction to run
        on the new plans."""
        self.plans = plan_all_stubs(self.infos, self.texts, self.compiled)
        self.dropped, self.left_out = None, frozenset()

    def leave_out(self, stubs) -> None:
        """Plans without ``stubs`` ((top-level type, stub name)) as well as those left out before."""
        self.left_out = self.left_out | frozenset(stubs)
        self.plans = plan_all_stubs(self.infos, self.texts, self.compiled, self.left_out)

    def put(self, tree: Path, files: dict[str, str]) -> list[str]:
        """Write one tree's files; rounds only add placeholders and blank keywords, so only changed files are
        rewritten.  Returns the file list for the compiler."""
        written = self.written.setdefault(tree, {})
        changed = {p: t for p, t in files.items() if written.get(p) != t}
        write_tree(tree, changed)
        written.update(changed)
        return sorted(files)

    def tree_files(self, source: dict[str, str], stubbed: bool = False) -> dict[str, str]:
        """One tree's files: ``source`` (``stubbed_sources()`` when ``stubbed``) with the shim's blanks, the shim
        itself (mcs) and the generated helpers."""
        files = {p: self.shim.apply_blanks(p, source[p], self._insertions(p) if stubbed else None)
                 for p in self.order}
        if self.kind is Compiler.MCS:
            files[SHIM_FILE] = self.shim.text()
        files.update(self.prepared.helpers)  # generated C#: down-level helpers, Roslyn's implicit usings
        return files

    def _insertions(self, path: str):
        """The stubs' insertions into ``path`` in the stubbed tree, or None where it has none."""
        if path in self.plans and path not in (self.dropped or set()):
            return self.plans[path].insertions
        return None

    def stubbed_sources(self) -> dict[str, str]:
        dropped = self.dropped or set()
        return {p: self.plans[p].stubbed_text if p in self.plans and p not in dropped else self.texts[p]
                for p in self.order}
