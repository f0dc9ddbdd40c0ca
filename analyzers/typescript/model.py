"""The analyzer's records: what a file imports and declares, its stubbed text, the plan of a whole repository, one
compile's outcome and the tally of one diff."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.analyzers.typescript.positions import FilePositions
from benchsmith.analyzers.typescript.resolver import ModuleResolver
from benchsmith.analyzers.typescript.tsc_output import TscMessage
from benchsmith.analyzers.typescript.tsconfig import PathConfig
from benchsmith.records import Reason


@dataclass
class Binding:
    local: str  # the name the import binds in the file
    imported: str | None  # the exported name it reads ('default' for a default import); None = the module itself
    site: "ImportSite"


@dataclass
class ImportSite:
    start: int  # char offsets of the whole statement in the original text
    end: int
    specifier: str
    es: bool  # an ES import (a stubbed file needs `export {}` to stay a module)
    target: str | None = None  # the project file it resolves to
    bindings: list[Binding] = field(default_factory=list)
    unresolved_by_tsc: bool = False


@dataclass
class FileInfo:
    path: str
    text: str
    positions: FilePositions
    declaration: bool  # a .d.ts file: compiled, never stubbed, no refs
    parse_error: str | None = None
    sites: list[ImportSite] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)  # top-level names ('default' if it has a default export)
    reexports: list[tuple[str, str, str]] = field(default_factory=list)  # (specifier, imported, exported)
    star_exports: list[str] = field(default_factory=list)
    local_exports: dict[str, str] = field(default_factory=dict)  # exported name -> local name
    heritage: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)  # class -> [(base, member)]
    members: dict[str, set[str]] = field(default_factory=dict)  # class/interface/enum -> member names
    # class/interface/type literal -> member -> the name of its declared type, where it is one (`X`, `ns.X`)
    member_types: dict[str, dict[str, str]] = field(default_factory=dict)
    # the declared return types of functions (owner '' at the top level, else a class/interface/namespace)
    returns: dict[str, dict[str, str]] = field(default_factory=dict)
    other_module_syntax: bool = False  # a top-level export or an import we keep
    # a JavaScript module a TypeScript file imports (`~/env.mjs`): compiled so imports of it resolve, never stubbed,
    # never a place of references
    companion: bool = False


@dataclass
class StubbedFile:
    path: str
    text: str
    stub_ts_lines: set[int]  # tsc line indices (0-based) touched by a stub: diagnostics there are dropped
    locals: dict[str, Binding]


@dataclass
class Tally:
    """What one diff counted, filled while its diagnostics are attributed and written to the stats at the end."""

    new: int = 0
    on_stub_lines: int = 0
    unattributed: int = 0
    by_code: dict[str, int] = field(default_factory=dict)
    ignored: dict[str, int] = field(default_factory=dict)
    places: set[tuple[str, int, int]] = field(default_factory=set)  # (file, line, column) of refs kept so far


@dataclass(frozen=True)
class NewDiagnostic:
    """A diagnostic of the stubbed run that the original run does not have, at a char offset of the original."""

    file: str
    offset: int
    code: str
    message: str


@dataclass
class Plan:
    """Everything decided before the toolchain runs: the files, their imports, the stubbed tree."""

    files: dict[str, FileInfo]
    stubbed: dict[str, StubbedFile]
    resolver: ModuleResolver
    path_config: PathConfig
    repo: str = ""
    root: Path | None = None  # the vetted original tree
    workdir: Path | None = None  # our tsconfigs and the stubbed tree
    compiled: list[str] = field(default_factory=list)  # the files both compiles list (tsc-broken ones left out)
    original_syntax_errors: set[str] = field(default_factory=set)  # files tsc still cannot parse in the original
    trees: dict[str, Any] = field(default_factory=dict)  # tree-sitter trees parsed again during attribution
    tally: Tally = field(default_factory=Tally)
    checked: list["CheckerRef"] = field(default_factory=list)  # what the checker resolved in the original tree


@dataclass(frozen=True)
class CheckerRef:
    """One identifier the checker resolved to declarations in another project file (paths relative to the tree;
    lines 0-based with tsc's line breaks, characters in UTF-16 units)."""

    file: str
    line: int
    character: int
    name: str
    owner: str  # the class, interface, enum or namespace declaring a member; else the name itself
    decl_file: str
    start: tuple[int, int]
    end: tuple[int, int]


@dataclass
class CompileOutcome:
    messages: list[TscMessage] | None
    reason: Reason | None = None
    detail: str = ""
    duration: float = 0.0
    checked: list[CheckerRef] = field(default_factory=list)  # the checker script's references (original tree)
    capped: list[str] = field(default_factory=list)  # files whose references the script stopped reporting

