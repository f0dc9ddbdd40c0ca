"""C# 8-12 -> the C# 7 that mono's ``mcs`` parses, with an exact map from every rewritten position to the original.

The rewritten text is only ever *compiled* (for its diagnostics), never run, so a rewrite need keep only what name
resolution sees: every name, member access and type of the original stays in the rewritten text, mostly at its
original line and column, so the same cross-file uses give mcs the same diagnostics (CS0246, CS0117, CS1061 ...).

API (the C# analyzer codes against this; keep it stable):

    downlevel(text: str, tree=None, *, global_usings=(), value_types=frozenset()) -> DownlevelResult

- ``text``: one file's (already preprocessed) text; ``tree``: its tree-sitter C# tree for ``text`` (parsed here
  when None).  ``global_usings``: directive texts (``"using System;"``, ``"using static X.Y;"``, ``"using A = B;"``)
  collected over the project with ``extract_global_usings``; they are inserted before the file's first using /
  namespace member.  ``value_types``: simple names of project structs and enums (``Foo?`` keeps its ``?`` only
  for these, predefined and well-known BCL value types, and struct-constrained type parameters).
- ``DownlevelResult.text``: the rewritten text; identical object-equal text (``changed`` False, ``edits`` empty)
  when nothing needs rewriting (C# 7 code comes out byte-identical).
- ``.edits``: ``list[Edit]``, sorted, non-overlapping; ``Edit(start, end, replacement, construct, anchors)``:
  original character span ``[start, end)`` replaced by ``replacement`` (``start == end``: an insertion).
- ``.to_original_offset(offset) -> int`` and ``.to_original(line, col) -> (line, col)``: a position of the
  rewritten text (0-based line, 0-based *character* column, i.e. Python string index within the line) back to the
  original.  Exact for untouched text.  Inside a replacement: text copied from the original (a type repeated in a
  generated constructor, a pattern's subject) maps exactly to its source (``Edit.anchors``); any other generated
  character maps to the edit's ``start`` (an insertion: its point).  Positions past the end map to the end.
- ``.reparse(tree, parser) -> Tree``: the tree of ``text``, parsed incrementally from the tree of the original
  (reuses every untouched subtree; use it instead of a fresh parse of ``text``).
- ``.is_generated(offset) -> bool``: whether a rewritten character was written by the pass (not a copy).
- ``.to_rewritten_offset(offset) -> int``: the other direction, for untouched original positions (inside a
  replaced span: the replacement's start).
- ``.unsupported``: ``list[Unsupported(construct, line, col)]`` (0-based line/char column of the original) for
  constructs left as they were because no safe rewrite exists; the analyzer records them as
  ``unsupported_syntax:<construct>`` exclusions.  ``construct`` is a ``Construct`` member's value.
- ``.lossy``: ``list[Unsupported]`` for constructs rewritten with a loss the file can live with (the names inside
  an object initializer of a ``new()`` whose type is not visible in the file): a note, not an exclusion.
- ``.helpers``: names of generated helper sources this file needs (``HELPER_SOURCES[name]`` is a whole C# 7 file
  to add once to the compiled tree; empty for most files).

``extract_global_usings(text, tree=None) -> list[str]``: the file's ``global using`` directives as plain ``using``
directive texts (the rewrite itself blanks ``global``).
"""

from __future__ import annotations

import bisect
import enum
from dataclasses import dataclass, field

from benchsmith.text_positions import TextPositions


class Construct(str, enum.Enum):
    FILE_SCOPED_NAMESPACE = "file_scoped_namespace"
    GLOBAL_USING = "global_using"
    NULLABLE_ANNOTATION = "nullable_annotation"
    NULLABLE_DIRECTIVE = "nullable_directive"
    NULL_FORGIVING = "null_forgiving"
    TARGET_TYPED_NEW = "target_typed_new"
    PATTERN = "pattern"
    SWITCH_EXPRESSION = "switch_expression"
    SWITCH_PATTERN_CASE = "switch_pattern_case"
    RECORD = "record"
    INIT_ACCESSOR = "init_accessor"
    REQUIRED_MEMBER = "required_member"
    PRIMARY_CONSTRUCTOR = "primary_constructor"
    USING_DECLARATION = "using_declaration"
    STATIC_LAMBDA = "static_lambda"
    LOCAL_FUNCTION = "local_function"
    RANGE = "range"
    INDEX_FROM_END = "index_from_end"
    NULL_COALESCING_ASSIGNMENT = "null_coalescing_assignment"
    RAW_STRING = "raw_string"
    UTF8_STRING = "utf8_string"
    COLLECTION_EXPRESSION = "collection_expression"
    DEFAULT_INTERFACE_MEMBER = "default_interface_member"
    WITH_EXPRESSION = "with_expression"
    FILE_TYPE = "file_type"
    READONLY_MEMBER = "readonly_member"
    SCOPED = "scoped"
    TOP_LEVEL_STATEMENTS = "top_level_statements"
    LIST_PATTERN = "list_pattern"
    CONSTRAINT = "constraint"
    LAMBDA_SHADOWING = "lambda_shadowing"
    NATIVE_INT = "native_int"
    FUNCTION_POINTER = "function_pointer"
    REF_RETURN = "ref_return"  # C# 7, but mcs 6.8 cannot parse ``ref`` before a generic type
    STRUCT_PARAMETERLESS_CTOR = "struct_parameterless_ctor"  # C# 10: mcs rejects it (CS0568)
    REF_RECEIVER = "ref_receiver"  # C# 7.2 ``this ref`` extension receivers: mcs 6.8 rejects the pair (CS1101)
    NESTED_TUPLE_TYPE = "nested_tuple_type"  # C# 7, but mcs 6.8 cannot parse a tuple type two generics deep
    TASK_LIKE_ASYNC = "task_like_async"  # C# 7, but mcs 6.8 knows no task-like types
    FOREACH_DECONSTRUCTION = "foreach_deconstruction"  # C# 7, but mcs 6.8 cannot parse it
    LONG_TUPLE = "long_tuple"  # C# 7, but mcs 6.8 crashes on a tuple of more than 7 elements
    OTHER = "other"


@dataclass(frozen=True)
class Edit:
    start: int  # original character offsets, [start, end)
    end: int
    replacement: str
    construct: Construct
    # (offset in replacement, original offset, length): replacement[r:r+n] is a copy of original[o:o+n]
    anchors: tuple[tuple[int, int, int], ...] = ()


@dataclass(frozen=True)
class Unsupported:
    construct: str
    line: int  # 0-based
    col: int  # 0-based character column


@dataclass
class DownlevelResult:
    original: str
    text: str
    edits: list[Edit] = field(default_factory=list)
    unsupported: list[Unsupported] = field(default_factory=list)
    helpers: list[str] = field(default_factory=list)
    lossy: list[Unsupported] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.edits)

    def __post_init__(self) -> None:
        # new_starts[i]: offset in the rewritten text where edit i's replacement begins
        self._new_starts: list[int] = []
        self._orig_starts = [e.start for e in self.edits]
        delta = 0
        for e in self.edits:
            self._new_starts.append(e.start + delta)
            delta += len(e.replacement) - (e.end - e.start)
        self._orig_line_starts: list[int] | None = None  # computed on first use (most files never need them)
        self._new_line_starts: list[int] | None = None
        self._left_out: set[int] | None = None

    @property
    def _orig_lines(self) -> list[int]:
        if self._orig_line_starts is None:
            self._orig_line_starts = TextPositions(self.original).starts
        return self._orig_line_starts

    @property
    def _new_lines(self) -> list[int]:
        if self._new_line_starts is None:
            self._new_line_starts = TextPositions(self.text).starts if self.edits else self._orig_lines
        return self._new_line_starts

    def to_original_offset(self, offset: int) -> int:
        offset = max(0, min(offset, len(self.text)))
        i = bisect.bisect_right(self._new_starts, offset) - 1
        if i < 0:
            return offset
        e, ns = self.edits[i], self._new_starts[i]
        k = offset - ns
        if k < len(e.replacement):
            for r, o, n in e.anchors:
                if r <= k < r + n:
                    return o + (k - r)
            return e.start
        return e.end + (k - len(e.replacement))

    def is_generated(self, offset: int) -> bool:
        """True for a rewritten character that is no copy of the original (a keyword, helper call, brace the
        pass wrote): a diagnostic there points at the edit's start, not at the text it names."""
        offset = max(0, min(offset, len(self.text)))
        i = bisect.bisect_right(self._new_starts, offset) - 1
        if i < 0:
            return False
        e, k = self.edits[i], offset - self._new_starts[i]
        if k >= len(e.replacement):
            return False
        return not any(r <= k < r + n for r, _, n in e.anchors)

    def to_rewritten_offset(self, offset: int) -> int:
        offset = max(0, min(offset, len(self.original)))
        i = bisect.bisect_right(self._orig_starts, offset) - 1
        if i < 0:
            return offset
        e, ns = self.edits[i], self._new_starts[i]
        if offset < e.end:
            return ns
        return ns + len(e.replacement) + (offset - e.end)

    def reparse(self, tree, parser, edits: list[Edit] | None = None):
        """A tree-sitter tree of ``text`` (of ``original`` with ``edits``, a subset of ``self.edits``, applied),
        parsed incrementally from ``tree`` (the tree of ``original``): the untouched subtrees are reused, so this
        costs a fraction of a fresh parse."""
        edits = self.edits if edits is None else edits
        if not edits:
            return tree
        text = self.text if edits is self.edits else apply_edits(self.original, edits)
        t = tree.copy()
        orig = self.original
        # byte offset and (row, byte column) of each edit's start and end in the original, in one sweep
        info = []
        pos = byte = row = line_byte = 0  # line_byte: byte offset of the current row's start

        def advance(to: int) -> tuple[int, tuple[int, int]]:
            nonlocal pos, byte, row, line_byte
            seg = orig[pos:to]
            n = len(seg) if seg.isascii() else len(seg.encode("utf-8"))
            nl = seg.count("\n")
            if nl:
                last = seg.rfind("\n") + 1
                tail = seg[last:]
                line_byte = byte + n - (len(tail) if tail.isascii() else len(tail.encode("utf-8")))
                row += nl
            pos, byte = to, byte + n
            return byte, (row, byte - line_byte)

        for e in edits:
            sb, sp = advance(e.start)
            eb, ep = advance(e.end)
            info.append((sb, eb, sp, ep))
        for e, (sb, eb, sp, ep) in zip(reversed(edits), reversed(info)):
            rep = e.replacement.encode("utf-8")
            nl = rep.rfind(b"\n")
            np = (sp[0] + rep.count(b"\n"), len(rep) - nl - 1) if nl >= 0 else (sp[0], sp[1] + len(rep))
            t.edit(start_byte=sb, old_end_byte=eb, new_end_byte=sb + len(rep), start_point=sp, old_end_point=ep,
                   new_end_point=np)
        return parser.parse(text.encode("utf-8"), t)

    # Blanks the scan's tree may leave out: the blanked text holds no name and no node the scan captures or asks
    # for around a position (``?`` of a nullable reference type, the null-forgiving ``!``, the ``using`` of a
    # using declaration, a lambda's ``static``, a ``#nullable`` line), so only the tree's shape around it differs,
    # never a position, a name or a body's extent.  (A member's blanked ``readonly`` or ``async`` is a modifier the
    # blocker prediction captures, a blanked ``global`` starts a using directive the shim asks for: those stay in.)
    SCAN_KEEPS = frozenset({Construct.NULLABLE_ANNOTATION, Construct.NULL_FORGIVING, Construct.USING_DECLARATION,
                            Construct.STATIC_LAMBDA, Construct.NULLABLE_DIRECTIVE})
    # Same-length rewrites of one type into another that the scan's tree may leave out too, provided the scan
    # reads the replacement's names in place of the names inside (``scan_masks``): a function pointer become a
    # padded ``global::System.IntPtr`` (one file of pythonnet's has 467 of them).
    SCAN_RETYPES = frozenset({Construct.FUNCTION_POINTER})

    def _scan_left_out(self) -> set[int]:
        """Indices of the edits the scan's tree leaves out (``scan_tree``)."""
        if self._left_out is not None:
            return self._left_out
        edits, orig = self.edits, self.original
        skip: set[int] = set()
        for i, e in enumerate(edits):
            if len(e.replacement) != e.end - e.start or not orig[e.start:e.end].isascii():
                continue
            if e.construct in self.SCAN_KEEPS and not e.replacement.strip():
                skip.add(i)
            elif e.construct in self.SCAN_RETYPES and e.replacement.isascii():
                skip.add(i)
        if len(edits) >= 2 and edits[-1].construct is Construct.FILE_SCOPED_NAMESPACE \
                and edits[-1].start == edits[-1].end == len(orig) and self.text.endswith(edits[-1].replacement):
            opening = [i for i, e in enumerate(edits[:-1]) if e.construct is Construct.FILE_SCOPED_NAMESPACE]
            if len(opening) == 1 and edits[opening[0]].replacement == "{" \
                    and edits[opening[0]].end - edits[opening[0]].start == 1:
                skip |= {opening[0], len(edits) - 1}
        self._left_out = skip
        return skip

    def scan_tree(self, tree, parser):
        """The tree the scan reads for ``text``, incrementally from ``tree`` (of ``original``), with the edits that
        move no position left out: a re-parse costs by the places it touches.  A file-scoped namespace keeps its
        ``namespace X;`` form (its two edits, ``;`` -> ``{`` and the closing brace that ends the text, are left
        out: the braces would make tree-sitter re-parse the whole file, and the scan reads both forms alike); the
        blanks of ``SCAN_KEEPS`` stay; so do the types of ``SCAN_RETYPES``, whose names the scan masks
        (``scan_masks``).  Every position but the very end is ``text``'s."""
        skip = self._scan_left_out()
        if not skip:
            return self.reparse(tree, parser)
        return self.reparse(tree, parser, [e for i, e in enumerate(self.edits) if i not in skip])

    def scan_masks(self) -> tuple[tuple[int, int, str], ...]:
        """(start, end, replacement) in characters of ``text``, one per ``SCAN_RETYPES`` edit the scan's tree leaves
        out: the scan reads ``replacement``'s names there, not those of the original type its tree holds."""
        skip = self._scan_left_out()
        return tuple((self._new_starts[i], self._new_starts[i] + len(e.replacement), e.replacement.strip())
                     for i, e in enumerate(self.edits) if i in skip and e.construct in self.SCAN_RETYPES)

    def to_original(self, line: int, col: int) -> tuple[int, int]:
        starts = self._new_lines
        line = max(0, min(line, len(starts) - 1))
        off = self.to_original_offset(starts[line] + col)
        oline = bisect.bisect_right(self._orig_lines, off) - 1
        return oline, off - self._orig_lines[oline]


def apply_edits(text: str, edits: list[Edit]) -> str:
    parts, pos = [], 0
    for e in edits:
        parts.append(text[pos:e.start])
        parts.append(e.replacement)
        pos = e.end
    parts.append(text[pos:])
    return "".join(parts)


# short on purpose: mcs prints columns past 255 as "255+", so rewritten lines must stay short
HELPER = "__bsdl"
HELPER_FILE = "__benchsmith_downlevel__.cs"
HELPER_SOURCE = """// generated by benchsmith: helpers the down-level pass rewrites C# 8+ constructs into (C# 7)
static class __bsdl
{
    public static T Keep<T>(T value, params object[] rest) { return value; }
    public static T With<T>(T value, System.Action<T> init) { return value; }
    public static int Zero<T>(T value, out T copy) { copy = value; return 0; }
    public static bool Bind<T>(T value, out T copy) { copy = value; return true; }
    public static dynamic Any(params object[] args) { return null; }
    public static T Run<T>(System.Func<T> body) { return default(T); }
    public static bool Test<T>(T value, System.Func<T, bool> test) { return true; }
    public static bool TestAs<T>(object value, System.Func<T, bool> test) { return true; }
    public static R Switch<T, R>(T value, System.Func<T, R> arms) { return default(R); }
    public static bool Is<TIn, TOut>(TIn value, out TOut result) { result = default(TOut); return true; }
}
"""

HELPER_SOURCES: dict[str, str] = {HELPER_FILE: HELPER_SOURCE}


def downlevel(text: str, tree=None, *, global_usings=(), value_types=frozenset(), caps=None) -> DownlevelResult:
    """``caps``: ``rules.captures(tree, text)`` when the caller has them already."""
    from benchsmith.analyzers.csharp.downlevel.rules import collect_edits

    edits, unsupported, helpers, lossy = collect_edits(text, tree, global_usings=tuple(global_usings),
                                                       value_types=frozenset(value_types), caps=caps)
    if not edits:
        return DownlevelResult(text, text, [], unsupported, helpers, lossy)
    return DownlevelResult(text, apply_edits(text, edits), edits, unsupported, helpers, lossy)


def extract_global_usings(text: str, tree=None) -> list[str]:
    from benchsmith.analyzers.csharp.downlevel.rules import global_using_directives

    return global_using_directives(text, tree)
