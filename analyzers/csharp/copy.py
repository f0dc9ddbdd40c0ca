"""The analysed copy of each C# file: the text both compiles (original and stubbed tree) see, and the way back.

original --preprocess--> same positions, inactive ``#if`` branches and directive lines blanked (tree-sitter and
the compiler read the same code) --down-level (mcs only)--> C# 7 text with an exact edit map, the project's
``global using`` directives and the SDK's implicit usings placed in every file of the project.

Every position of the analysed copy maps back to the original (``AnalysedCopy.to_original``); references and
cuts are always made on the original text.  With Roslyn (``dotnet``) there is no down-level pass: it reads
current C# and global usings itself, and the implicit usings go into one generated file of ``global using``
directives (``USINGS_FILE``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchsmith import treesitter
from benchsmith.analyzers.csharp.preprocess import Preprocessed, preprocess
from benchsmith.analyzers.csharp.project import DEFAULT_DEFINES, ProjectIndex

USINGS_FILE = "__benchsmith_usings__.cs"
HELPER_PREFIX = "__benchsmith_helper_"


@dataclass
class AnalysedCopy:
    path: str
    original: str
    text: str  # what both compiles see
    pre: Preprocessed
    downlevel: object = None  # downlevel.DownlevelResult when the pass ran and changed the text
    # the tree-sitter tree the scan reads: of ``text``, but for the rewrites that move no position
    # (``DownlevelResult.scan_tree``)
    tree: object = None
    # where ``tree`` keeps a type ``text`` replaced: (start, end, type text) for ``scan_csharp``'s ``masks``
    scan_masks: tuple = ()
    pre_ts_error: bool | None = None  # whether tree-sitter found an error in the preprocessed text
    pre_tree: object = None  # tree-sitter's tree of ``pre.text`` (original positions: the scan-found references)

    def to_original(self, offset: int | None) -> int | None:
        """A character offset of ``text`` -> the original's (preprocessing keeps every position)."""
        if offset is None or self.downlevel is None:
            return offset
        return self.downlevel.to_original_offset(offset)


@dataclass
class Prepared:
    copies: dict[str, AnalysedCopy]
    unsupported: dict[str, list] = field(default_factory=dict)  # path -> [downlevel.Unsupported]
    helpers: dict[str, str] = field(default_factory=dict)  # generated file name -> C# 7 text (added to both trees)
    defines: frozenset[str] = frozenset(DEFAULT_DEFINES)  # union over the files (handed to mcs too)
    stats: dict[str, int] = field(default_factory=dict)

    def texts(self) -> dict[str, str]:
        return {p: c.text for p, c in self.copies.items()}

    def position_keeping(self) -> tuple[dict[str, str], dict[str, object]]:
        """Each file's text with the original's positions (preprocessed, or with ``#error`` blanked) and its tree
        where one was parsed."""
        texts = {p: (c.pre.text if not c.pre.error else c.text) for p, c in self.copies.items()}
        return texts, {p: c.pre_tree for p, c in self.copies.items() if c.pre_tree is not None}


GRAMMAR = "tree_sitter_c_sharp"
_ERROR_DIRECTIVE = re.compile(r"^([ \t]*#[ \t]*error\b.*?)(\r?)$", re.M)


def neutralise_error_directives(text: str) -> str:
    """``#error`` lines guard build configurations (defines we do not pass); blank them, keeping every offset."""
    return _ERROR_DIRECTIVE.sub(lambda m: " " * len(m.group(1)) + m.group(2), text)


def prepare(files: dict[str, str], configs: dict[str, str], *, downlevel: bool, roslyn: bool = False) -> Prepared:
    """The analysed copies of ``files`` (path -> original text); see the module docstring."""
    index = ProjectIndex(configs)
    copies: dict[str, AnalysedCopy] = {}
    defines: set[str] = set(DEFAULT_DEFINES)
    stats = {"files_preprocessed": 0, "preprocess_errors": 0, "files_downleveled": 0, "downlevel_edits": 0,
             "files_unsupported": 0, "files_not_rewritten": 0, "lossy_rewrites": 0}
    trees = {}
    caps: dict[str, dict] = {}  # what the down-level rules look at, per file
    rewriting = downlevel and not roslyn
    if rewriting:
        from benchsmith.analyzers.csharp.downlevel.rules import captures
    parser = treesitter.parser(GRAMMAR)
    for path in sorted(files):
        original = files[path]
        settings = index.settings(path)
        defines |= settings.defines
        pre = preprocess(original, settings.defines)
        stats["files_preprocessed"] += pre.changed
        if pre.error:
            stats["preprocess_errors"] += 1
            # left to the compiler, which evaluates the directives itself with the same symbols
            copies[path] = AnalysedCopy(path, original, neutralise_error_directives(original), pre)
            continue
        copies[path] = AnalysedCopy(path, original, pre.text, pre)
        trees[path] = parser.parse(pre.text.encode("utf-8"))
        copies[path].tree = copies[path].pre_tree = trees[path]
        copies[path].pre_ts_error = trees[path].root_node.has_error
        if rewriting:
            # one walk of the tree in C, while it is fresh in the processor's caches (a second loop over all
            # the trees costs a third more)
            caps[path] = captures(trees[path], pre.text)
    out = Prepared(copies, defines=frozenset(defines), stats=stats)
    implicit: dict[str, tuple[str, ...]] = {p: index.settings(p).implicit_usings for p in files}
    if roslyn or not downlevel:
        if roslyn:
            namespaces = sorted({u for us in implicit.values() for u in us})
            if namespaces:
                out.helpers[USINGS_FILE] = "".join(f"global using global::{u};\n" for u in namespaces)
        return out
    from benchsmith.analyzers.csharp.downlevel import HELPER_SOURCES, downlevel as rewrite, extract_global_usings
    from benchsmith.analyzers.csharp.downlevel.rules import value_types_of

    # One project's global usings (and implicit ones) reach all of its files.
    by_project: dict[str, list[str]] = {}
    for path in sorted(trees):
        project = index.settings(path).project
        if "global" in copies[path].text:  # `global using` needs the keyword
            by_project.setdefault(project, []).extend(extract_global_usings(copies[path].text, trees[path]))
    # the project's value types, from the rules' captures (a `Foo?` of a struct declared in another file is
    # Nullable)
    value_types = frozenset().union(*(value_types_of(caps[p]) for p in sorted(trees)))
    for path in sorted(trees):
        copy = copies[path]
        if copy.pre_ts_error:
            # tree-sitter cannot read it (a grammar gap, or a build configuration we do not know): no rewrite is
            # safe on an error tree; the compiler decides, as without the pass
            stats["files_not_rewritten"] += 1
            continue
        project = index.settings(path).project
        usings: list[str] = []
        for u in [*(f"using {ns};" for ns in implicit[path]), *by_project.get(project, ())]:
            if u not in usings:
                usings.append(u)
        res = rewrite(copy.text, trees[path], global_usings=tuple(usings), value_types=value_types, caps=caps[path])
        # rewrites that keep the file compiling but drop something (an object initializer of an untyped `new()`)
        stats["lossy_rewrites"] += len(res.lossy)
        if res.unsupported:
            out.unsupported[path] = list(res.unsupported)
            stats["files_unsupported"] += 1
        for name in res.helpers:
            if name in HELPER_SOURCES:
                out.helpers[f"{HELPER_PREFIX}{name}.cs"] = HELPER_SOURCES[name]
        if res.changed:
            copy.text = res.text
            copy.downlevel = res
            # the scan needs the rewritten text's tree: parsed incrementally from the preprocessed one
            copy.tree = res.scan_tree(trees[path], parser)
            copy.scan_masks = res.scan_masks()
            stats["files_downleveled"] += 1
            stats["downlevel_edits"] += len(res.edits)
    return out
