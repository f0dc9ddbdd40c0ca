"""Default (corrected) CrossCodeEval scoring: one tree-sitter parse of ``prompt + completion`` per text decides
where the statement ends, what is a comment and what is an identifier, for every language.

Where it differs from the released scorer (``compat``), and why (each has a unit test):

Every language with an analyzer is scored (``benchsmith.analyzers.registry()``): its analyzer class declares the
tree-sitter grammar and the statement rules the example builder cut the groundtruth with
(``statement_terminators``, ``line_end_terminators``, ``statement_containers``); comment and identifier node types
come from the grammar itself (named node kinds spelled ``*comment*`` / ``*identifier*``).  See ``rules()``.

1. Truncation works on whole lines of the parse tree, for every language:
   - Java/TypeScript/C#/JavaScript: the completion is kept up to the end of the line holding the first statement end:
     a ``;``/``{``/``}`` *token* (never a character inside a string, comment, template literal or
     interpolation; ``${ }`` is not a block) or, for statements without a ``;`` (TypeScript's automatic
     semicolons), the end of the innermost error-free statement. A completion that starts with ``{`` is cut
     too (the released code keeps everything when the terminator is at index 0), and ``{ get; }`` or
     ``for (;;) {`` on one line stay whole, so an exact copy of a one-line groundtruth always matches.
   - Go: the same tokens, and a line break after a token the Go lexer ends with an automatic semicolon
     (an identifier, a literal, ``return``, ``)``, ``]``, ``}``, ``++`` ...: ``GoAnalyzer.line_end_terminators``),
     so ``x := pkg.F(a)`` ends at its line while ``pkg.F(a,`` runs on to the next.
   - Python: the completion is kept up to the end of the line where the statement containing the cut ends
     (for a compound statement: its header, up to the ``:``). Errors elsewhere in the prompt do not make the
     whole multi-line completion count; if the statement cannot be delimited even on prefixes ending at a
     newline, the first non-empty line is kept (CrossCodeEval's groundtruth unit is a line).
2. Comments are comment *nodes*: ``//`` floor division, ``#`` in C#/Java/TS strings and ``https://`` in any
   string survive; ``/* ... */`` block comments are removed.
3. Identifiers are identifier leaves of the tree inside the completion: string prefixes (``f``/``r``/``b``),
   words in strings/template literals, ``true``/``false``/``null``/``undefined``/``nil``, predefined types (Go's
   predeclared ``int``, ``string``, ``error`` ... too) and ``var`` are not identifiers; identifiers that start with
   a non-ASCII letter are.
4. ``es`` is ``rapidfuzz.fuzz.ratio`` (Indel similarity, no difflib autojunk heuristic, no rounding), so a long
   target with repeated characters is not penalised by difflib's popularity pruning.
5. An uncut completion is right-stripped like a cut one (the released code strips only cut ones).

The groundtruth is not truncated (it is the reference), only cleaned of comments with the same parser.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from benchsmith.evaluate.cceval.common import (
    PREFIX_TRIES,
    ExampleScore,
    Language,
    analyzer_class,
    exact_match,
    identifier_match,
    parser,
    ts_language,
)

_ENC = "surrogatepass"  # lone surrogates survive a round trip instead of crashing the scorer

# Words a grammar exposes as identifiers although the language reserves them (or predeclares them as types, which
# TypeScript/Java/C# grammars give their own node types and so never count).
RESERVED_AS_IDENTIFIER = {
    Language.JAVA: frozenset({"var"}),
    Language.GO: frozenset({
        "any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32", "float64", "int", "int8",
        "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
    }),
}
# Identifier-like leaves whose kind name does not contain "identifier".
_OTHER_IDENTIFIER_KINDS = frozenset({"label_name"})  # Go's `break outer`
# Parents whose braces belong to an expression inside a string, not to a statement or block.
_INTERPOLATION_PARENTS = frozenset({"template_substitution", "interpolation"})
# Containers whose children are statements/members (a child's end is a statement end even without a `;`) come
# from ``Analyzer.statement_parents()``: the example builder cuts groundtruths with the same set.


@dataclass(frozen=True)
class Rules:
    """How one language is parsed and cut; built from its analyzer class and grammar by ``rules()``."""

    language: Language
    comment_types: frozenset[str]
    identifier_types: frozenset[str]
    reserved: frozenset[str]
    terminators: frozenset[str] | None  # None: Python's statements (no terminator tokens)
    line_end_terminators: frozenset[str]  # a line break after one of these tokens ends the statement (Go)
    statement_parents: frozenset[str]  # a child of one of these ends a statement without a token


def _named_kinds(ts_lang) -> frozenset[str]:
    return frozenset(
        ts_lang.node_kind_for_id(i)
        for i in range(ts_lang.node_kind_count)
        if ts_lang.node_kind_is_named(i) and ts_lang.node_kind_is_visible(i)
    )


@functools.lru_cache(maxsize=None)
def rules(language: Language) -> Rules:
    cls = analyzer_class(language)
    kinds = _named_kinds(ts_language(language))
    line_end = frozenset(cls.line_end_terminators)
    terminators = cls.statement_terminators
    return Rules(
        language=language,
        comment_types=frozenset(k for k in kinds if "comment" in k),
        identifier_types=frozenset(k for k in kinds if "identifier" in k) | (_OTHER_IDENTIFIER_KINDS & kinds),
        reserved=RESERVED_AS_IDENTIFIER.get(language, frozenset()),
        terminators=None if terminators is None else frozenset(terminators),
        line_end_terminators=line_end,
        statement_parents=cls.statement_parents(),
    )


@dataclass(frozen=True)
class Processed:
    text: str  # kept completion with comments removed
    before_comments: str  # kept completion (diagnostic)
    identifiers: tuple[str, ...]  # a tuple: Processed objects are cached and shared


def _leaves(node, start: int, end: int):
    """Leaves (including comment nodes, which are leaves) overlapping [start, end), in document order."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.start_byte >= end or n.end_byte < start or (n.end_byte == start and n.start_byte < start):
            continue
        if n.child_count == 0:
            yield n
            continue
        stack.extend(reversed(n.children))


def _first_leaf_at_or_after(root, c: int):
    """First non-empty leaf whose end lies after byte ``c`` (the token at the cut, or the next one)."""
    for leaf in _leaves(root, c, root.end_byte + 1):
        if leaf.end_byte > c and leaf.end_byte > leaf.start_byte:
            return leaf
    return None


def _has_problem(node) -> bool:
    return node.has_error or node.is_missing


# ---- Python -------------------------------------------------------------------------------------------------


def _python_statement_end(root, c: int) -> int | None:
    """End byte of the statement (or compound-statement header) containing the first token at/after ``c``;
    None when the parser could not delimit it without errors."""
    leaf = _first_leaf_at_or_after(root, c)
    if leaf is None:
        return None
    node = leaf
    while node is not None:
        if node.type == "ERROR":
            return None
        parent = node.parent
        # A header whose block starts after the cut: the statement ends at the ':' before the block.
        for child in node.children:
            if child.type == "block" and child.start_byte >= c and child.prev_sibling is not None:
                header_end = child.prev_sibling.end_byte
                if header_end <= c:
                    break
                for n in node.children:
                    if n.start_byte >= child.start_byte:
                        break
                    if _has_problem(n):
                        return None
                return header_end
        if node.type == "decorator":
            return None if _has_problem(node) else node.end_byte
        if parent is not None and parent.type in ("module", "block"):
            return None if _has_problem(node) else node.end_byte
        node = parent
    return None


def _python_cut(prompt_b: bytes, comp_b: bytes, root, language: Language) -> int | None:
    """Byte offset (relative to the completion) where the kept completion ends."""
    c = len(prompt_b)
    end = _python_statement_end(root, c)
    if end is not None and end > c:
        return _line_end(comp_b, end - c)
    # The full text does not delimit the statement (e.g. later lines are broken): try prefixes ending at a
    # newline, first to last, with the same criterion.
    # Bounded as compat's cutter is: a prefix with only blanks since the last one tried parses as that one did,
    # and at most PREFIX_TRIES prefixes are parsed (each reads the whole prompt).
    tree_parser = parser(language)
    pos = comp_b.find(b"\n", 1)
    tried, tries = 0, 0
    while pos >= 0 and tries < PREFIX_TRIES:
        if not tries or comp_b[tried:pos].strip():
            tries, tried = tries + 1, pos
            tree = tree_parser.parse(prompt_b + comp_b[:pos])
            end = _python_statement_end(tree.root_node, c)
            if end is not None and c < end <= c + pos:
                return _line_end(comp_b, end - c)
        pos = comp_b.find(b"\n", pos + 1)
    return None


def _line_end(comp_b: bytes, rel: int) -> int:
    nl = comp_b.find(b"\n", max(rel, 0))
    return len(comp_b) if nl < 0 else nl


def _first_line(comp_b: bytes) -> int:
    """End of the first line that has non-whitespace content."""
    pos = 0
    while True:
        nl = comp_b.find(b"\n", pos)
        if nl < 0:
            return len(comp_b)
        if comp_b[pos:nl].strip():
            return nl
        pos = nl + 1


# ---- brace languages ----------------------------------------------------------------------------------------


def _brace_cut(comp_b: bytes, root, c: int, r: Rules) -> int | None:
    ends: list[int] = []
    terminators = r.terminators or frozenset()
    for leaf in _leaves(root, c, root.end_byte + 1):
        if leaf.start_byte < c or leaf.is_missing:
            continue
        if leaf.type in terminators and (leaf.parent is None or leaf.parent.type not in _INTERPOLATION_PARENTS):
            ends.append(leaf.end_byte)
            break
    if r.line_end_terminators:
        end = _line_end_statement(root, c, r)
        if end is not None:
            ends.append(end)
    first = _first_leaf_at_or_after(root, c)
    node = first.parent if first is not None and r.statement_parents else None
    while node is not None and node.type != "ERROR":
        # Only a statement-level node ends a statement (a declaration inside `using (...)` does not).
        if node.parent is not None and node.parent.type in r.statement_parents and node.end_byte > c:
            if not _has_problem(node):
                ends.append(node.end_byte)
            break
        node = node.parent
    if not ends:
        return None
    return _line_end(comp_b, min(ends) - c)


def _line_end_statement(root, c: int, r: Rules) -> int | None:
    """End byte of the first token after ``c`` that a line break follows and that the lexer ends with an automatic
    semicolon (Go); comments in between neither end nor continue the statement."""
    prev = None
    for leaf in _leaves(root, c, root.end_byte + 1):
        if leaf.end_byte <= c or leaf.end_byte == leaf.start_byte or leaf.is_missing:
            continue  # tree-sitter-go's zero-width end-of-file terminator is no token of the text
        is_comment = leaf.type in r.comment_types
        if prev is not None and not is_comment and leaf.start_point[0] > prev.end_point[0]:
            return prev.end_byte
        if not is_comment:
            prev = leaf if leaf.type in r.line_end_terminators else None
    return None


# ---- shared ---------------------------------------------------------------------------------------------------


def _strip_comments(text_b: bytes, root, c: int, end: int, r: Rules) -> bytes:
    types = r.comment_types
    pieces: list[bytes] = []
    pos = c
    for leaf in _leaves(root, c, end):
        if leaf.type not in types:
            continue
        s, e = max(leaf.start_byte, c), min(leaf.end_byte, end)
        # Blanks right before a comment only separated it from the code (or indented it): drop them too.
        pieces.append(text_b[pos:s].rstrip(b" \t"))
        pos = e
    pieces.append(text_b[pos:end])
    return b"".join(pieces)


def _identifiers(text_b: bytes, root, c: int, end: int, r: Rules) -> list[str]:
    reserved = r.reserved
    out: list[str] = []
    for leaf in _leaves(root, c, end):
        if leaf.type not in r.identifier_types:
            continue
        word = text_b[max(leaf.start_byte, c) : min(leaf.end_byte, end)].decode("utf-8", _ENC).lstrip("#")
        if word and word not in reserved:
            out.append(word)
    return out


@functools.lru_cache(maxsize=2048)  # repeated samples and the shared groundtruth of a task's samples
def process(prompt: str, completion: str, language: Language, truncate: bool) -> Processed:
    prompt_b = prompt.encode("utf-8", _ENC)
    comp_b = completion.encode("utf-8", _ENC)
    text_b = prompt_b + comp_b
    c = len(prompt_b)
    r = rules(language)
    root = parser(language).parse(text_b).root_node
    if truncate:
        if r.terminators is None:
            rel = _python_cut(prompt_b, comp_b, root, language)
            if rel is None:
                rel = _first_line(comp_b)
        else:
            rel = _brace_cut(comp_b, root, c, r)
            if rel is None:
                rel = len(comp_b)
    else:
        rel = len(comp_b)
    end = c + rel
    kept = comp_b[:rel]
    cleaned = _strip_comments(text_b, root, c, end, r)
    ids = _identifiers(text_b, root, c, end, r)
    if truncate:
        kept = kept.rstrip()
        cleaned = cleaned.rstrip()
    return Processed(cleaned.decode("utf-8", _ENC), kept.decode("utf-8", _ENC), tuple(ids))


def edit_similarity(pred: str, target: str) -> float:
    from rapidfuzz import fuzz

    return float(fuzz.ratio(pred.strip(), target.strip()))


def score_example(task_id: str, prompt: str, groundtruth: str, pred: str, language: Language, sample: int = 0) -> ExampleScore:
    p = process(prompt, pred, language, truncate=True)
    t = process(prompt, groundtruth, language, truncate=False)
    id_em, precision, recall, f1 = identifier_match(p.identifiers, t.identifiers)
    return ExampleScore(
        task_id=task_id,
        pred=p.text,
        target=t.text,
        pred_ids=list(p.identifiers),
        target_ids=list(t.identifiers),
        em=exact_match(p.text, t.text),
        es=edit_similarity(p.text, t.text),
        id_em=id_em,
        id_precision=precision,
        id_recall=recall,
        id_f1=f1,
        pred_postprocessed=p.before_comments,
        sample=sample,
    )
