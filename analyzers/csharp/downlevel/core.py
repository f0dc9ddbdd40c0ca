"""Shared machinery of the C# down-level rules: character offsets of tree-sitter nodes, the edit list with its
conflict check, replacement builders whose copied original text stays mapped to its source, a flat token list."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from benchsmith.text_positions import TextPositions

from benchsmith.analyzers.csharp.downlevel.edits import Construct, Edit, Unsupported

# literal nodes kept whole in the token list (their inner children are not tokens of the expression grammar)
ATOMIC = frozenset({"string_literal", "verbatim_string_literal", "raw_string_literal", "character_literal",
                    "interpolated_string_expression", "integer_literal", "real_literal", "boolean_literal",
                    "null_literal", "comment"})


@dataclass(frozen=True)
class Tok:
    type: str
    start: int  # characters
    end: int
    text: str
    node: object


class Rep:
    """A replacement under construction: literal text and copies of original spans (copies keep their map)."""

    def __init__(self, ctx: "Ctx") -> None:
        self.ctx, self.parts, self.anchors, self.n = ctx, [], [], 0

    def lit(self, s: str) -> "Rep":
        self.parts.append(s)
        self.n += len(s)
        return self

    def copy(self, start: int, end: int, text: str | None = None) -> "Rep":
        s = self.ctx.text[start:end] if text is None else text
        if s:
            if text is None:
                self.anchors.append((self.n, start, len(s)))
            self.parts.append(s)
            self.n += len(s)
        return self

    def copy_edited(self, start: int, end: int) -> "Rep":
        """A copy of ``[start, end)`` with the edits already made inside it applied (their maps kept)."""
        inner = sorted((e for e in self.ctx.edits if start <= e[0] and e[1] <= end and (e[0] < e[1] or start < e[0] < end)),
                       key=lambda e: (e[0], e[1], e[5]))
        pos = start
        for e in inner:
            if e[0] < pos:
                continue
            self.copy(pos, e[0])
            base = self.n
            self.parts.append(e[2])
            self.anchors.extend((base + r, o, n) for r, o, n in e[4])
            self.n += len(e[2])
            pos = e[1]
        return self.copy(pos, end)

    def copy_pieces(self, pieces: list[tuple[int, int, str]]) -> "Rep":
        for start, end, s in pieces:
            if s == self.ctx.text[start:end]:
                self.copy(start, end)
            else:
                self.lit(s)
        return self

    def text(self) -> str:
        return "".join(self.parts)


class Ctx:
    def __init__(self, text: str, tree) -> None:
        self.text = text
        self.tree = tree
        self.ascii = text.isascii()
        # byte -> char offsets for non-ASCII text: the byte starts of the non-ASCII characters and the extra bytes
        # before each (a regex finds them at C speed; lookups bisect)
        self._nb: list[int] = []
        self._extra: list[int] = []
        if not self.ascii:
            import re

            extra = 0
            for m in re.finditer(r"[^\x00-\x7f]", text):
                ci = m.start()
                self._nb.append(ci + extra)
                extra += len(m.group().encode("utf-8")) - 1
                self._extra.append(extra)
        self.edits: list[tuple[int, int, str, Construct, tuple, int, int]] = []  # + seq, group
        self.unsupported: list[Unsupported] = []
        self.lossy: list[Unsupported] = []
        self.helpers: set[str] = set()
        self._seq = itertools.count()
        self._names = itertools.count(1)
        self.group = 0
        self.caps: dict = {}
        self.renames: dict[int, str] = {}  # pattern designation offset -> its new name
        self.value_types: frozenset[str] = frozenset()
        self._tokens: list[Tok] | None = None
        self._tok_starts: list[int] | None = None
        self._positions: TextPositions | None = None

    # positions ---------------------------------------------------------------------------------------------
    def c(self, byte: int) -> int:
        if self.ascii:
            return byte
        import bisect

        k = bisect.bisect_left(self._nb, byte)  # non-ASCII characters starting before ``byte``
        return byte - (self._extra[k - 1] if k else 0)

    def span(self, node) -> tuple[int, int]:
        return self.c(node.start_byte), self.c(node.end_byte)

    def src(self, node) -> str:
        s, e = self.span(node)
        return self.text[s:e]

    def line_col(self, offset: int) -> tuple[int, int]:
        if self._positions is None:
            self._positions = TextPositions(self.text)
        return self._positions.position(offset)

    def fresh(self, prefix: str) -> str:
        return f"__{prefix}{next(self._names)}"

    # edits -------------------------------------------------------------------------------------------------
    def new_group(self) -> int:
        self.group += 1
        return self.group

    def edit(self, start: int, end: int, replacement, construct: Construct, prio: int = 0,
             span: tuple[int, int] | None = None) -> None:
        if isinstance(replacement, Rep):
            rep, anchors = replacement.text(), tuple(replacement.anchors)
        else:
            rep, anchors = replacement, ()
        if rep == self.text[start:end]:
            return
        # Insertions at one point: prio < 0 first (prefixes), then by nesting: ``span`` is the original extent the
        # inserted text opens (insertion at its start) or closes (at its end); the outer opener goes first and the
        # inner closer goes first, whichever rewrite made them first.
        nest = 0
        if span is not None:
            nest = -span[1] if span[0] == start else -span[0]
        self.edits.append((start, end, rep, construct, anchors, (prio, nest, next(self._seq)), self.group))

    def insert(self, at: int, s: str, construct: Construct, prio: int = 0,
               span: tuple[int, int] | None = None) -> None:
        self.edit(at, at, s, construct, prio, span)

    def drop_inside(self, start: int, end: int) -> None:
        """Forget the edits of other rewrites inside ``[start, end)`` (their text moved elsewhere)."""
        self.edits = [e for e in self.edits if e[6] == self.group or not (start <= e[0] and e[1] <= end)]

    def blank(self, start: int, end: int, construct: Construct) -> None:
        """Spaces in place of ``[start, end)``, newlines kept: nothing after it moves."""
        seg = self.text[start:end]
        self.edit(start, end, "".join(ch if ch in "\r\n" else " " for ch in seg), construct)

    def replace_padded(self, start: int, end: int, s: str, construct: Construct) -> None:
        """``s`` padded with spaces to the span's length when it is not longer (single-line spans)."""
        n = end - start
        self.edit(start, end, s + " " * (n - len(s)) if len(s) <= n else s, construct)

    def unsupported_at(self, offset: int, construct: Construct) -> None:
        line, col = self.line_col(offset)
        self.unsupported.append(Unsupported(construct.value, line, col))

    def lossy_at(self, offset: int, construct: Construct) -> None:
        line, col = self.line_col(offset)
        self.lossy.append(Unsupported(construct.value, line, col))

    def finish(self) -> list[Edit]:
        """Sorted, non-overlapping edits; a rewrite (group) any of whose edits overlaps an accepted one is dropped
        whole and recorded as unsupported."""
        order = sorted(self.edits, key=lambda e: (e[0], e[1], e[5]))
        order = self._drop_blanked(order)
        bad_groups: set[int] = set()
        while True:
            accepted, end, new_bad = [], 0, set()
            for e in order:
                if e[6] in bad_groups:
                    continue
                if e[0] < end:
                    new_bad.add(e[6])
                    continue
                accepted.append(e)
                end = max(end, e[1])
            fresh = new_bad - bad_groups
            if not fresh:
                break
            recorded = set()
            for e in order:
                if e[6] in fresh and e[6] not in recorded:
                    recorded.add(e[6])
                    self.unsupported_at(e[0], e[3])
            bad_groups |= fresh
        return self._wrap([Edit(s, e, r, c, a) for s, e, r, c, a, _, _ in accepted])

    def _drop_blanked(self, order):
        """A rewrite lying wholly inside text another rewrite replaces (a record's blanked parameter list, whose
        copies already carry the fix; a function pointer type become IntPtr) has nothing left to act on: dropped
        without a record."""
        import bisect

        blanks = sorted((e[0], e[1], e[6]) for e in order if e[1] > e[0])
        if not blanks:
            return order
        starts = [b[0] for b in blanks]

        def inside(e) -> bool:
            k = bisect.bisect_right(starts, e[0])
            for bs, be, g in blanks[max(0, k - 8):k]:
                if g != e[6] and bs <= e[0] and e[1] <= be and (bs, be) != (e[0], e[1]) \
                        and not (e[0] == e[1] and e[0] in (bs, be)):
                    return True
            return False

        groups: dict[int, bool] = {}
        for e in order:
            groups[e[6]] = groups.get(e[6], True) and inside(e)
        gone = {g for g, all_inside in groups.items() if all_inside}
        return [e for e in order if e[6] not in gone] if gone else order

    WRAP_AT = 120
    NO_BREAK = frozenset({Construct.RAW_STRING, Construct.UTF8_STRING, Construct.NULLABLE_DIRECTIVE})

    def _wrap(self, edits: list[Edit]) -> list[Edit]:
        """mcs prints any column past 255 as ``255+``: a replacement that makes its line grow past ``WRAP_AT``
        starts on a new line instead (whitespace between tokens; never inside a one-line interpolated string)."""
        if not edits:
            return edits
        import bisect

        no_break: list[tuple[int, int]] | None = None  # the one-line interpolated strings, when first needed
        out, pos, col, text = [], 0, 0, self.text
        for e in edits:
            seg = text[pos:e.start]
            nl = seg.rfind("\n")
            col = len(seg) - nl - 1 if nl >= 0 else col + len(seg)
            rep = e.replacement
            grows = len(rep) > e.end - e.start
            if grows and col > self.WRAP_AT and e.construct not in self.NO_BREAK:
                if no_break is None:
                    no_break = sorted(self.span(n) for n in self.caps.get("interpolated_string_expression", [])
                                      if not self.src(n).lstrip("@$").startswith('"""') and "@" not in self.src(n)[:3])
                    starts = [a for a, _ in no_break]
                k = bisect.bisect_right(starts, e.start) - 1
                if not (k >= 0 and no_break[k][0] < e.start < no_break[k][1]):
                    rep = "\n" + rep
                    e = Edit(e.start, e.end, rep, e.construct, tuple((r + 1, o, n) for r, o, n in e.anchors))
                    col = 0
            nl = rep.rfind("\n")
            col = len(rep) - nl - 1 if nl >= 0 else col + len(rep)
            out.append(e)
            pos = e.end
        return out

    # tokens ------------------------------------------------------------------------------------------------
    def use_region(self, node) -> None:
        """Later ``tokens()`` / ``tok_index`` calls see the tokens of ``node`` only (a walk of the whole file per
        pattern would cost more than the rest of the pass)."""
        cached = self._regions.get(node.id) if hasattr(self, "_regions") else None
        if not hasattr(self, "_regions"):
            self._regions = {}
        if cached is None:
            cached = self._regions[node.id] = self._walk(node)
        self._tokens, self._tok_starts = cached

    def _walk(self, root) -> tuple[list[Tok], list[int]]:
        out: list[Tok] = []
        cursor = root.walk()
        down = True
        while True:
            node = cursor.node
            if down and (node.child_count == 0 or node.type in ATOMIC):
                if node.type != "comment" and node.end_byte > node.start_byte:
                    s, e = self.span(node)
                    out.append(Tok(node.type, s, e, self.text[s:e], node))
                down = False
            if down and cursor.goto_first_child():
                continue
            if cursor.node.id == root.id:
                break
            if cursor.goto_next_sibling():
                down = True
                continue
            if not cursor.goto_parent() or cursor.node.id == root.id:
                break
            down = False
        return out, [t.start for t in out]

    def tokens(self) -> list[Tok]:
        if self._tokens is None:
            self.use_region(self.tree.root_node)
        return self._tokens

    def tok_index(self, offset: int) -> int:
        """Index of the first token (of the current region) starting at or after ``offset``."""
        import bisect

        self.tokens()
        return bisect.bisect_left(self._tok_starts, offset)


_EXPRESSION_LIKE = ("_expression", "_pattern", "argument", "argument_list", "subpattern", "when_clause",
                    "switch_expression_arm", "property_pattern_clause", "positional_pattern_clause",
                    "bracketed_argument_list", "interpolation", "equals_value_clause", "ERROR",
                    "constant_pattern", "initializer_expression", "with_initializer")


def expression_root(node):
    """The outermost expression around ``node``: a pattern never reaches past it, however tree-sitter split it."""
    n = node
    while n.parent is not None and (n.parent.type.endswith(_EXPRESSION_LIKE) or n.parent.type == "ERROR"):
        n = n.parent
    return n


def child_of_type(node, *types):
    for c in node.children:
        if c.type in types:
            return c
    return None


def children_of_type(node, *types):
    return [c for c in node.children if c.type in types]


def ancestor(node, *types):
    n = node.parent
    while n is not None:
        if n.type in types:
            return n
        n = n.parent
    return None
