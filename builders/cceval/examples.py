"""Cut cross-file references into CrossCodeEval examples.

The imagined cursor sits right before the name that became unresolved; the groundtruth runs from there to the end
of the statement, as CrossCodeEval cuts it:
- Python: the end of the logical line (brackets, backslash continuations and multi-line strings followed), or
  the end of the simple statement when ``;`` separates several on one line; a trailing comment is not included.
- brace languages: through the first ``;``, ``{`` or ``}`` token after the cursor, possibly over several lines;
  with automatic semicolons (Go: ``Analyzer.line_end_terminators``) also through the last token of a line that
  the language's lexer would end with a semicolon, and otherwise no later than the end of the innermost statement
  or member around the cursor (``Analyzer.statement_parents()``, the set the default scorer cuts with: TypeScript
  and JavaScript statements without ``;``, enum constants, ``case X:`` labels with their colon); a cursor inside
  an attribute, annotation, decorator or enum member ends with it (``Analyzer.enclosing_ends``: C#
  ``[Obsolete("...")]`` before ``class X {``, Java ``@Foo(...)`` before a method, a TypeScript decorator, a C# enum
  member before the next one).
Boundaries come from tree-sitter tokens, so a ``;`` inside a string or comment never ends a statement.
``prompt + groundtruth + right_context`` is the file's text, always.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterable, Iterator

from benchsmith.analyzers.base import Analyzer, Boundary
from benchsmith.builders.cceval.cursor import candidate_places, choose_place, classify
from benchsmith.files import SourceFile
from benchsmith.pipeline import Step
from benchsmith.records import CrossFileRef, Reason, ReferenceKind, Stage
from benchsmith.builders.cceval.records import CompletionExample, CursorRule, ExampleMetadata
from benchsmith.text_positions import TextPositions

_OPEN = {"(", "[", "{"}
_CLOSE = {")", "]", "}"}
# Template-string interpolation braces are not statement punctuation.
_INTERPOLATION_PARENTS = {"template_substitution", "interpolation", "string_interpolation",
                          "interpolated_string_expression", "interpolation_brace"}


def _leaves_from(node, start_byte: int) -> Iterator:
    """Leaves (tokens, comments included) of ``node`` that start at or after ``start_byte``, in order."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.end_byte <= start_byte and n.end_byte != n.start_byte:
            continue
        if n.child_count == 0:
            if n.start_byte >= start_byte:
                yield n
            continue
        stack.extend(reversed(n.children))


def _is_comment(node) -> bool:
    return "comment" in node.type


@dataclass
class Cut:
    end_byte: int
    tokens: int


_STRING_PARTS = {"string_content", "string_end", "escape_sequence", "string_fragment", "line_continuation",
                 "escape_interpolation"}


def _counts(leaf) -> bool:
    """A lexical token of the groundtruth: a string counts once (its start), comments not at all."""
    return not _is_comment(leaf) and leaf.type not in _STRING_PARTS


# Parents of ``case`` labels: a label that ends a statement (it is a child of a statement container, or of Java's
# statement group) ends at its colon, not right before it.
_LABEL_PARENTS = frozenset({"switch_section", "switch_case", "switch_block_statement_group"})
_TRAILING_PUNCTUATION = frozenset({";", ","})


def _statement_limit(tree, cursor_byte: int, containers: frozenset[str],
                     enclosing: frozenset[str] = frozenset()) -> int | None:
    """End byte of the innermost node around ``cursor_byte`` whose parent is a statement container (a ``case``
    label: with its colon), or of an ``enclosing`` node (attribute, annotation ...) around it, whichever is
    innermost."""
    node = tree.root_node.descendant_for_byte_range(cursor_byte, cursor_byte)
    while node is not None and node.parent is not None:
        if node.type in enclosing and node.end_byte > cursor_byte and not node.has_error:
            return node.end_byte
        parent = node.parent
        if parent.type in _LABEL_PARENTS and node.end_byte > cursor_byte and not node.has_error:
            after = node.next_sibling
            if after is not None and after.type == ":":
                return after.end_byte
            if parent.type in containers:
                return node.end_byte
        elif parent.type in containers and node.end_byte > cursor_byte and not node.has_error:
            return node.end_byte
        node = parent
    return None


def statement_end(tree, data: bytes, cursor_byte: int, terminators: frozenset[str] | None,
                  line_end_terminators: frozenset[str] = frozenset(),
                  statement_containers: frozenset[str] = frozenset(),
                  enclosing: frozenset[str] = frozenset()) -> Cut | None:
    """Where the statement containing ``cursor_byte`` ends (exclusive byte offset) and how many tokens it spans.

    ``line_end_terminators``: token types after which a line break is an (automatic) terminator (Go).
    ``statement_containers``: the statement also ends with the innermost node whose parent has one of these
    types (automatic semicolons leave no token; ``Analyzer.statement_parents()``).
    ``enclosing``: node types (``Analyzer.enclosing_ends``) that end the groundtruth with their own end."""
    tokens = 0
    if terminators is not None:
        limit = (_statement_limit(tree, cursor_byte, statement_containers, enclosing)
                 if statement_containers or enclosing else None)
        prev = None  # the last non-comment token, when a line break after it would end the statement
        for leaf in _leaves_from(tree.root_node, cursor_byte):
            if line_end_terminators and leaf.end_byte == leaf.start_byte:
                continue  # tree-sitter-go's zero-width end-of-file terminator is no token of the text
            if limit is not None and leaf.start_byte >= limit and not _is_comment(leaf):
                # A node's end can leave its own `;` or `,` outside it (a TypeScript field or overload signature,
                # a Java enum constant): on the same line, it belongs to the groundtruth, since the scorers keep
                # whole lines and a model completing the line writes it.
                if leaf.type in _TRAILING_PUNCTUATION and b"\n" not in data[limit:leaf.start_byte]:
                    tokens += 1
                    return Cut(leaf.end_byte, tokens)
                return Cut(limit, tokens)
            if prev is not None and not _is_comment(leaf) and leaf.start_point[0] > prev.end_point[0]:
                return Cut(prev.end_byte, tokens)
            tokens += _counts(leaf)
            parent = leaf.parent
            if leaf.type in terminators and not (parent is not None and parent.type in _INTERPOLATION_PARENTS):
                return Cut(leaf.end_byte, tokens)
            if not _is_comment(leaf):
                prev = leaf if leaf.type in line_end_terminators else None
        if prev is not None:
            return Cut(prev.end_byte, tokens)
        return Cut(limit, tokens) if limit is not None else None
    # Python: the logical line.  A newline ends it unless inside brackets or after a backslash continuation.
    depth = 0
    prev = None
    for leaf in _leaves_from(tree.root_node, cursor_byte):
        if prev is not None and depth == 0 and leaf.start_point[0] > prev.end_point[0]:
            between = data[prev.end_byte : leaf.start_byte]
            if b"\\\n" not in between and b"\\\r\n" not in between:
                break
        if depth == 0 and (leaf.type == ";" or _is_comment(leaf)):
            break
        in_interp = leaf.parent is not None and leaf.parent.type in _INTERPOLATION_PARENTS
        if leaf.type in _OPEN and not in_interp:
            depth += 1
        elif leaf.type in _CLOSE and not in_interp:
            depth = max(0, depth - 1)
        tokens += _counts(leaf)
        if leaf.type != "line_continuation":
            prev = leaf
        elif prev is not None:
            prev = leaf  # its end point is on the next line, so the continued line does not end here
    if prev is None:
        return None
    end = prev.end_byte
    if prev.type == "line_continuation":  # never end a groundtruth on a dangling backslash
        return None
    return Cut(end, tokens)


def _parse_view(data: bytes, analyzer: Analyzer) -> bytes:
    """The bytes tree-sitter parses (input hygiene, issue 13): for Python's logical lines, a lone \r ends a line
    as \n does (Python's tokenizer, so pylint, counts it), which tree-sitter-python does not; the swap keeps every
    byte offset, so cuts still index the original text."""
    if analyzer.statement_terminators is None and b"\r" in data:
        return re.sub(rb"\r(?!\n)", b"\n", data)
    return data


def groundtruth_cut(analyzer: type[Analyzer] | Analyzer, tree, data: bytes, cursor_byte: int) -> Cut | None:
    """``statement_end`` with every rule of ``analyzer``'s language, as the example cutter applies them."""
    cls = analyzer if isinstance(analyzer, type) else type(analyzer)
    return statement_end(tree, data, cursor_byte, cls.statement_terminators, cls.line_end_terminators,
                         cls.statement_parents(), cls.enclosing_ends)


def line_end_cut(tree, cursor_byte: int, terminators: frozenset[str]) -> Cut | None:
    """The released CrossCodeEval's end for brace languages: through the first line, from the cursor's on, whose
    last token (comments aside) is one of ``terminators``; None when no line ends so.  Measured with
    ``bench/released.py``: every located released groundtruth of Java (161), TypeScript (138) and C# (357) ends
    there, where the first-token rule reaches 161, 114 and 355."""
    tokens = 0
    last = None
    for leaf in _leaves_from(tree.root_node, cursor_byte):
        if _is_comment(leaf) or leaf.end_byte == leaf.start_byte:
            continue
        if last is not None and leaf.start_point[0] > last.end_point[0] and _ends_line(last, terminators):
            return Cut(last.end_byte, tokens)
        tokens += _counts(leaf)
        last = leaf
    return Cut(last.end_byte, tokens) if last is not None and _ends_line(last, terminators) else None


def _ends_line(leaf, terminators: frozenset[str]) -> bool:
    return leaf.type in terminators and not (leaf.parent is not None and leaf.parent.type in _INTERPOLATION_PARENTS)


class UniversalNewlines:
    """A file's text with every CRLF and lone CR read as LF, as Python's text mode reads a file (and as the released
    CrossCodeEval read its files: its C# groundtruths of CRLF files end their lines with LF), with offsets of the
    original text moved onto it.  Lines keep their numbers: each terminator stays one."""

    def __init__(self, text: str) -> None:
        self.crlf = [m.start() for m in re.finditer("\r\n", text)]
        self.text = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text

    def offset(self, original: int) -> int:
        return original - bisect.bisect_left(self.crlf, original)


def make_task_id(language: str, repository: str, file: str, line: int, column: int) -> str:
    """Stable across runs and independent of which other examples survive the filters."""
    return f"project_cc_{language}/{repository}/{file}:{line + 1}:{column + 1}"


class ExampleCutter(Step[CrossFileRef]):
    """Refs of one repository -> examples, one per cross-file reference.

    Every reference is a candidate, a later one in the same statement too: CrossCodeEval's released
    ``project_cc_python/62`` puts its cursor on the second reference of
    ``old_tail = tokenizer.decode(generator.sequence_actual[:, -max_stop_string:])[0]`` (prompt ending in
    ``generator.``), the groundtruth running from there to the end of the statement.  ``first_per_statement``
    restores the earlier rule (the first cursor of a statement wins, later ones are dropped as
    ``same_statement``), e.g. to rebuild a split made with it.

    ``cursor``: ``CursorRule.NAME`` puts the cursor right before the name, ``CursorRule.RELEASED`` where the
    released benchmark puts it for the language (``Analyzer.released_cursor``, builders/cceval/cursor.py), drawn
    with ``seed``; two references whose cursors meet are one example.  ``kinds``: the reference kinds to cut
    (None: all); the others are recorded as ``reference_kind_not_selected``."""

    stage = Stage.EXAMPLE_BUILDER

    def __init__(self, analyzer: Analyzer, files: dict[str, SourceFile], repository: str, commit: str | None = None,
                 counter=None, on_file=None, first_per_statement: bool = False,
                 cursor: CursorRule = CursorRule.NAME, kinds: frozenset[ReferenceKind] | None = None,
                 seed: int = 0, tree_views: dict[str, bytes] | None = None) -> None:
        super().__init__(counter)
        self.on_file = on_file  # progress: called with (files done, files total)
        self.analyzer = analyzer
        self.files = files
        self.repository = repository
        self.commit = commit
        self.first_per_statement = first_per_statement
        self.cursor = cursor
        self.kinds = kinds
        self.tree_views = tree_views or {}  # AnalysisResult.tree_views: what the analysis read of a file
        self.seed = seed

    def run(self, refs: Iterable[CrossFileRef]) -> Iterator[CompletionExample]:
        by_file: dict[str, list[CrossFileRef]] = {}
        for ref in refs:
            if self.kinds is not None and ref.kind not in self.kinds:
                self.drop(make_task_id(self.analyzer.language, self.repository, ref.file, ref.line, ref.column),
                          Reason.KIND_NOT_SELECTED, f"{ref.symbol!r} is a {ref.kind.value} reference",
                          self.repository)
                continue
            by_file.setdefault(ref.file, []).append(ref)
        lang = self.analyzer.language
        for done, path in enumerate(sorted(by_file)):
            if self.on_file is not None:
                self.on_file(done, len(by_file))
            src = self.files.get(path)
            file_refs = sorted(by_file[path], key=lambda r: (r.line, r.column))
            if src is None:
                for r in file_refs:
                    self.drop(make_task_id(lang, self.repository, path, r.line, r.column), Reason.CURSOR_NOT_FOUND,
                              "file not in snapshot", self.repository)
                continue
            idx = TextPositions(src.text)
            raw = src.text.encode("utf-8")
            # what the compiler read (C#: the active #if branches), with the original byte offsets
            view = self.tree_views.get(path)
            data = _parse_view(view if view is not None else self.analyzer.tree_source(path, src.text), self.analyzer)
            if len(data) != len(raw):  # an offset-changing view would cut the wrong text: never use one
                data = _parse_view(raw, self.analyzer)
            tree = self.analyzer.parser_for(path).parse(data)
            covered_until = -1  # char offset where the previous example's groundtruth ends
            last_cursor = -1
            used: set[int] = set()  # released cursors already taken in this file
            universal: UniversalNewlines | None = None  # the file as the released benchmark read it
            for r in file_refs:
                tid = make_task_id(lang, self.repository, path, r.line, r.column)
                cursor = idx.offset(r.line, r.column, within_line=True)
                if cursor is None or not src.text.startswith(r.symbol, cursor):
                    self.drop(tid, Reason.CURSOR_NOT_FOUND, f"{r.symbol!r} not at {r.line + 1}:{r.column + 1}",
                              self.repository)
                    continue
                if cursor == last_cursor:  # two diagnostics on one name: one example (the task id is the place)
                    self.drop(tid, Reason.DUPLICATE_REFERENCE, f"another reference to {r.symbol!r} at the same place",
                              self.repository)
                    continue
                last_cursor = cursor
                if self.first_per_statement and cursor < covered_until:
                    self.drop(tid, Reason.SAME_STATEMENT, "another reference earlier in the same statement",
                              self.repository)
                    continue
                cut = groundtruth_cut(self.analyzer, tree, data, idx.to_byte(cursor))
                if cut is None:
                    self.drop(tid, Reason.CURSOR_NOT_FOUND, "no statement end after the cursor", self.repository)
                    continue
                released = self.analyzer.released_cursor
                if self.cursor is CursorRule.RELEASED and released.line_end:
                    cut = line_end_cut(tree, idx.to_byte(cursor), self.analyzer.statement_terminators or frozenset())
                    if cut is None:
                        self.drop(tid, Reason.CURSOR_NOT_FOUND, "no line ends a statement after the cursor",
                                  self.repository)
                        continue
                if self.cursor is CursorRule.RELEASED and released.boundary is not Boundary.NAME:
                    place, cut = self._released(tree, data, idx.to_byte(cursor), cut, tid)
                    cursor = idx.to_char(place)
                    if cursor in used:
                        self.drop(tid, Reason.DUPLICATE_REFERENCE,
                                  f"the released cursor drawn for {r.symbol!r} is another reference's", self.repository)
                        continue
                    used.add(cursor)
                end = idx.to_char(cut.end_byte)
                if end <= cursor:
                    self.drop(tid, Reason.CURSOR_NOT_FOUND, "empty groundtruth", self.repository)
                    continue
                covered_until = end
                end_line = idx.line_of(max(cursor, end - 1))
                text, start, stop = src.text, cursor, end
                first_line, after_line = r.line, end_line + 1
                if self.cursor is CursorRule.RELEASED:
                    if universal is None:
                        universal = UniversalNewlines(src.text)
                    text, start, stop = universal.text, universal.offset(cursor), universal.offset(end)
                    first_line = text.count("\n", 0, start)
                    after_line = text.count("\n", 0, max(start, stop - 1)) + 1
                yield CompletionExample(
                    prompt=text[:start],
                    groundtruth=text[start:stop],
                    right_context=text[stop:],
                    metadata=ExampleMetadata(
                        task_id=tid,
                        repository=self.repository,
                        file=path,
                        context_start_lineno=0,
                        groundtruth_start_lineno=first_line,
                        right_context_start_lineno=after_line,
                        language=lang,
                        symbol=r.symbol,
                        defining_file=r.defining_file,
                        diagnostic=r.diagnostic,
                        commit=self.commit,
                        groundtruth_tokens=cut.tokens,
                        reference_kind=r.kind.value,
                        definition=r.definition.to_dict() if r.definition is not None else None,
                        cursor_place=classify(text[text.rfind("\n", 0, start) + 1:start]).value,
                    ),
                )

    def _released(self, tree, data: bytes, name: int, cut: Cut, tid: str) -> tuple[int, Cut]:
        """The released cursor for the reference whose name starts at byte ``name`` (its statement cut from there
        is ``cut``): a seeded draw among the places of the line from which the statement ends where it does."""
        rule = self.analyzer.released_cursor
        terminators = self.analyzer.statement_terminators or frozenset()
        line_start = data.rfind(b"\n", 0, name) + 1
        cuts = {name: cut}
        for place in candidate_places(rule, tree, line_start, name):
            if place != name:
                other = (line_end_cut(tree, place, terminators) if rule.line_end
                         else groundtruth_cut(self.analyzer, tree, data, place))
                if other is not None and other.end_byte == cut.end_byte:
                    cuts[place] = other
        pick = choose_place(rule, sorted(cuts), lambda p: classify(data[line_start:p].decode("utf-8", "replace")),
                            f"{self.seed}:{tid}")
        return pick, cuts[pick]
