"""The extension point: one ``Analyzer`` subclass per language, on one recipe.

Every language finds cross-file references the same way, and ``Analyzer.analyze`` owns that recipe:

1. ``plan``: read the vetted snapshot, index its declarations and plan the stubs (each intra-project import
   replaced by an empty class);
2. ``run`` the toolchain once over the original tree (``Tree.ORIGINAL``);
3. ``run`` it once over the stubbed tree (``Tree.STUBBED``);
4. ``diff``: the diagnostics that appear only in the stubbed run;
5. ``attribute``: each new diagnostic to a ``CrossFileRef`` on the original text (file, line, column, the API
   and the file defining it), or nothing when it is not a use of a cross-file API;
6. ``finish``: order the references and fill the statistics.

A language supplies those parts plus class attributes (extensions, grammar, statement rules, toolchain image).
Each step records what it cannot handle on ``result.exclusions`` (a ``Reason`` per file or repository) and
returns None to stop the recipe for the whole repository.  Cutting examples, filters, retrieval, writers and
executors are language-independent and read only the class attributes below.
"""

from __future__ import annotations

import abc
import enum
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Iterable, Iterator, TypeVar

from benchsmith import confine, treesitter
from benchsmith.files import RepoSnapshot
from benchsmith.records import CrossFileRef, CursorPlace, Exclusion, ReferenceKind
from benchsmith.runner import ContainerSpec, ToolchainBackend, probe_confinement, require_confinement

# Node types (across the brace grammars) whose children are statements or members: a child's end is a statement
# end even without a ``;`` token (TypeScript's automatic semicolons, enum constants, C#'s ``case X:`` labels).  The
# example builder and the default scorer both read ``Analyzer.statement_parents()``, so a groundtruth always ends
# where the scorer would cut an exact copy of it.
BRACE_STATEMENT_CONTAINERS = frozenset(
    {"program", "statement_block", "class_body", "switch_case", "switch_default", "block", "compilation_unit",
     "declaration_list", "switch_section", "interface_body", "enum_body", "namespace_declaration"}
)


class Boundary(enum.Enum):
    """Which side of the whitespace between two tokens a released cursor takes."""

    NAME = "name"  # no choice: right before the cross-file name
    TOKEN_START = "token_start"  # right before a token (Java): whitespace in the prompt
    TOKEN_END = "token_end"  # right after a token, or column 0 (TypeScript): whitespace in the groundtruth


@dataclass(frozen=True)
class ReleasedCursor:
    """A language's released cursor rule: the boundary, the relative weight of each kind of place, and whether the
    released groundtruth runs to the end of the first line whose last token ends a statement (``;``, ``{``, ``}``:
    ``[Attr]`` with the method header after it, ``{ player: f(x) }];`` through its ``;``) instead of to the first
    such token."""

    boundary: Boundary = Boundary.NAME
    weights: dict[CursorPlace, float] = field(default_factory=dict)
    line_end: bool = False

    def weight(self, place: CursorPlace) -> float:
        return self.weights.get(place, 1.0)


AT_NAME = ReleasedCursor()


class Tree(enum.Enum):
    """Which of the two trees a toolchain run compiles."""

    ORIGINAL = "original"
    STUBBED = "stubbed"


PlanT = TypeVar("PlanT")  # a language's plan: its index, stub plans and the trees it wrote
RunT = TypeVar("RunT")  # one toolchain run's parsed outcome
FoundT = TypeVar("FoundT")  # one diagnostic new in the stubbed run


@dataclass
class AnalysisResult:
    refs: list[CrossFileRef] = field(default_factory=list)
    exclusions: list[Exclusion] = field(default_factory=list)
    tool_versions: dict[str, str] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    no_refs_detail: str = ""  # why the toolchain found nothing, where the analyzer knows (one line for the user)
    # the bytes tree-sitter should parse per file where the analysis read something else than the file (C#: the
    # active #if branches with the project's symbols), offsets kept; the cutter prefers them to ``tree_source``
    tree_views: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class Diagnostic:
    """One toolchain message, normalised: 0-based line and character column."""

    file: str  # relative to the analysed tree, '/'-separated
    line: int
    column: int
    code: str
    message: str
    end_line: int | None = None
    end_column: int | None = None

    def key(self) -> tuple:
        """Identity used to diff the original and stubbed runs."""
        return (self.file, self.line, self.column, self.code, self.message)


@dataclass
class AnalyzerOptions:
    backend: ToolchainBackend = ToolchainBackend.LOCAL
    timeout: float = 900.0  # seconds per whole-tree toolchain run
    container_image: str | None = None  # override the image tag for docker/podman backends
    memory_mb: int = confine.DEFAULT_MEMORY_MB  # per toolchain run, its whole process tree
    # run toolchains unconfined where the machine cannot confine them, instead of refusing (ToolMissing)
    allow_unconfined: bool = False
    # False: never confine (measuring what confinement costs; trusted input).  Output is the same either way.
    confine: bool = True


class Analyzer(abc.ABC, Generic[PlanT, RunT, FoundT]):
    language: ClassVar[str]
    extensions: ClassVar[tuple[str, ...]]
    # tree-sitter grammar wheel: module name and the function returning the language capsule
    grammar_module: ClassVar[str]
    grammar_function: ClassVar[str] = "language"
    comment_prefix: ClassVar[str] = "//"
    # Tokens that end a statement for the example builder (brace languages); None = Python's logical line.
    statement_terminators: ClassVar[frozenset[str] | None] = frozenset({";", "{", "}"})
    # Automatic semicolons (Go): a line break right after a token of one of these types ends the statement too,
    # as an explicit terminator would.  Empty for languages whose grammar keeps every terminator as a token.
    line_end_terminators: ClassVar[frozenset[str]] = frozenset()
    # Automatic semicolon insertion without a token (JavaScript): a statement also ends where the innermost node
    # holding the cursor whose parent is one of these node types (program, block ...) ends.  Empty: tokens only.
    statement_containers: ClassVar[frozenset[str]] = frozenset()
    # containers/<dockerfile>: the toolchain image for docker/podman backends
    dockerfile: ClassVar[str] = ""
    # Address space the toolchain's runtime reserves beyond what it uses (JVM, V8, Go): added to the memory limit
    # where no memory cgroup exists and an address-space rlimit stands in for it.
    address_space_extra: ClassVar[int] = 0
    # Where the released CrossCodeEval puts the cursor in this language (``--cursor released``;
    # builders/cceval/cursor.py): at the cross-file name unless a language measured otherwise.
    released_cursor: ClassVar[ReleasedCursor] = AT_NAME
    # The rest of the language recipe the builders read (docs/adding-a-language.md; the registry test asserts every
    # language fills it, so a language missing from one silently weaker screen or cut cannot happen):
    # the kinds of cross-file use this analyzer finds (ReferenceKind: metadata.reference_kind, --kinds)
    reference_kinds: ClassVar[frozenset[ReferenceKind]] = frozenset()
    # a regular expression matching the first line of an import statement (screens read the file without imports)
    import_pattern: ClassVar[str] = ""
    # node types that end a groundtruth starting inside them with their own end (an attribute, annotation,
    # decorator, enum member), instead of running on through the declaration that follows
    enclosing_ends: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def statement_parents(cls) -> frozenset[str]:
        """The statement-end rule shared by the example builder and the default scorer: ``statement_containers``
        plus, unless line ends terminate statements (Go has that rule instead), ``BRACE_STATEMENT_CONTAINERS``
        (unused for Python, whose statements are logical lines)."""
        if cls.line_end_terminators:
            return frozenset(cls.statement_containers)
        return frozenset(cls.statement_containers) | BRACE_STATEMENT_CONTAINERS

    def __init__(self, options: AnalyzerOptions | None = None) -> None:
        self.options = options or AnalyzerOptions()

    def analyze(self, snapshot: RepoSnapshot, workdir: Path) -> AnalysisResult:
        """Find cross-file references in ``snapshot`` (whose files are already vetted and copied under
        ``snapshot.root``).  ``workdir`` is an empty directory the analyzer may use for stubbed trees.  The recipe
        is the same for every language (see the module docstring); a language overrides its steps, not this."""
        result = AnalysisResult(tool_versions=self.tool_versions())
        plan = self.plan(snapshot, workdir, result)
        if plan is None:
            return result
        before = self.run(plan, Tree.ORIGINAL, result)
        if before is None:
            return result
        after = self.run(plan, Tree.STUBBED, result)
        if after is None:
            return result
        for found in self.diff(plan, before, after, result):
            ref = self.attribute(plan, found, result)
            if ref is not None:
                result.refs.append(ref)
        self.finish(plan, result)
        return result

    @abc.abstractmethod
    def plan(self, snapshot: RepoSnapshot, workdir: Path, result: AnalysisResult) -> PlanT | None:
        """Index the snapshot and plan the stubs (writing the stubbed tree under ``workdir`` if the language needs
        one on disk); None when nothing can be analysed (the reason is on ``result.exclusions``)."""

    @abc.abstractmethod
    def run(self, plan: PlanT, tree: Tree, result: AnalysisResult) -> RunT | None:
        """Run the toolchain once over one tree; None when the run failed for the whole repository (recorded)."""

    @abc.abstractmethod
    def diff(self, plan: PlanT, before: RunT, after: RunT, result: AnalysisResult) -> Iterable[FoundT]:
        """The diagnostics of ``after`` that ``before`` does not have, in a deterministic order."""

    @abc.abstractmethod
    def attribute(self, plan: PlanT, found: FoundT, result: AnalysisResult) -> CrossFileRef | None:
        """The cross-file reference one new diagnostic marks, positioned on the original text; None when it marks
        none (a stub artefact, a use the language does not count)."""

    def finish(self, plan: PlanT, result: AnalysisResult) -> None:
        """Order ``result.refs`` and fill ``result.stats`` once all references are in; default: sort by place."""
        result.refs.sort(key=lambda r: (r.file, r.line, r.column))

    def tool_versions(self) -> dict[str, str]:
        return {}

    @classmethod
    def read_configs(cls, repo: str | os.PathLike) -> dict[str, str]:
        """Repository configuration files this language needs as *data* (TypeScript: tsconfig ``paths``), read
        without following symlinks; the builder stores them on the snapshot (``snapshot.configs``).  Never
        handed to a toolchain as configuration."""
        return {}

    def tree_source(self, path: str, text: str) -> bytes:
        """The bytes tree-sitter parses for ``text`` when cutting statements: the file itself, unless the language
        has a preprocessor (C#: inactive ``#if`` branches blanked, byte offsets kept)."""
        return text.encode("utf-8")

    @classmethod
    def ts_language(cls):
        """The tree-sitter ``Language`` for this analyzer's grammar wheel."""
        return treesitter.language(cls.grammar_module, cls.grammar_function)

    @classmethod
    def grammar_for(cls, path: str) -> str:
        """The grammar function for one file of this language; override when a language has several (TypeScript's
        ``.tsx`` files need ``language_tsx``)."""
        return cls.grammar_function

    @classmethod
    def ts_language_for(cls, path: str):
        """The tree-sitter ``Language`` for one file (``grammar_for(path)``)."""
        return treesitter.language(cls.grammar_module, cls.grammar_for(path))

    @classmethod
    def parser_for(cls, path: str = ""):
        """The shared tree-sitter ``Parser`` for one file of this language."""
        return treesitter.parser(cls.grammar_module, cls.grammar_for(path))

    def container(self, mounts, workdir: str | None = None) -> ContainerSpec | None:
        if self.options.backend is ToolchainBackend.LOCAL:
            return None
        from benchsmith.containers import image_tag  # lazy: only container users need it

        image = self.options.container_image or image_tag(self.dockerfile)
        return ContainerSpec(engine=self.options.backend, image=image, mounts=tuple(mounts), workdir=workdir,
                             memory=f"{int(self.options.memory_mb)}m")

    def toolchain_paths(self) -> list[str]:
        """Directories the local toolchain needs to read beyond the system ones (``/usr``, ``/lib*``) and its
        executable's own: an interpreter's prefix, a compiler package outside ``/usr``."""
        return []

    def confinement(self, read=(), scratch=(), write=()) -> confine.Confinement | None:
        """How one local toolchain run is confined: ``read`` (our data for the tool: trees, config and list files;
        made readable to the throwaway uid), private ``scratch`` directories, ``write`` directories it must fill
        for us.  None for container backends (the engine confines them) and, where the machine cannot confine, when
        the user allowed unconfined runs; otherwise that case raises ``ConfinementUnavailable`` (a ``ToolMissing``,
        so the repository is recorded, not lost)."""
        if self.options.backend is not ToolchainBackend.LOCAL or not self.options.confine:
            return None
        caps = probe_confinement()
        if not caps.available:
            if self.options.allow_unconfined:
                return None
            require_confinement(False)
        data = tuple(str(p) for p in read)
        limits = confine.Limits(memory_bytes=int(self.options.memory_mb) * confine.MIB,
                                address_space_extra=self.address_space_extra)
        return confine.Confinement(read=data + tuple(self.toolchain_paths()), scratch=tuple(str(p) for p in scratch),
                                   write=tuple(str(p) for p in write), limits=limits, grant=data)


def json_lines(stdout: str) -> Iterator[dict]:
    """The JSON objects a toolchain driver prints one per line; other lines (JVM warnings, a panic's text) are
    skipped, so callers judge completeness by the driver's own ``done`` record, not by parsing luck."""
    for raw in stdout.splitlines():
        raw = raw.strip()
        if not raw.startswith("{"):
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def strip_generics(name: str) -> str:
    """``Map<K, List<V>>.Entry`` -> ``Map.Entry``: type arguments removed from a Java/C# type name."""
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def skip_type_args(text: str, at: int) -> int:
    """The offset just past a balanced ``<...>`` starting at ``at`` (Java/C# type arguments); ``at`` itself when
    they do not close within 2,000 characters."""
    depth = 0
    for i in range(at, min(len(text), at + 2000)):
        if text[i] == "<":
            depth += 1
        elif text[i] == ">":
            depth -= 1
            if depth == 0:
                return i + 1
    return at

