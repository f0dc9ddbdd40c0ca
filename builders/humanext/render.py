"""Function templates: source text in which every renamable identifier is a placeholder.

The authors' release stores each function as a template with ``{{ name }}`` placeholders (and the docstring
apart); :func:`from_placeholder_template` reads that form.  :func:`from_source` builds the same form from plain
source (our own JSONL schema, the hub rows) by locating identifiers with ``ast`` positions.  Either way a
:class:`FunctionTemplate` is a list of literal text and placeholder segments, so rendering with a mapping is an
exact textual substitution: the code keeps the formatting it was written with (no ``ast.unparse`` round trip),
and a literal ``{{ x }}`` inside a string of user source is never mistaken for a placeholder.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from benchsmith.text_positions import byte_col_to_char

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_KEEP = object()


class PairFormatError(ValueError):
    """Malformed input; the message names the record and the field so the user can fix the file."""

    def __init__(self, record: str, field_name: str, message: str) -> None:
        self.record = record
        self.field = field_name
        self.message = message
        super().__init__(f"{record}: field '{field_name}': {message}")


@dataclass(frozen=True)
class Placeholder:
    name: str


Segment = "str | Placeholder"


@dataclass(frozen=True)
class FunctionTemplate:
    """One function without its docstring, as segments; the docstring is kept apart (it is perturbed apart).

    ``header_lines``: how many lines of the rendered template form the ``def`` header (decorators and the full
    signature up to its colon).  ``docstring_block`` is the docstring statement exactly as it sits in the
    function (indented lines, quotes included); ``docstring_text`` is its cleaned value.
    """

    name: str
    segments: tuple[str | Placeholder, ...]
    header_lines: int
    docstring_block: str | None
    docstring_text: str | None
    placeholders: frozenset[str] = field(default_factory=frozenset)

    # -- rendering -----------------------------------------------------------------------------------------
    def render_template(self, mapping: Mapping[str, str] | None = None) -> str:
        """The function without its docstring, with placeholders replaced (identity where unmapped)."""
        mapping = mapping or {}
        return "".join(s if isinstance(s, str) else mapping.get(s.name, s.name) for s in self.segments)

    def header(self, mapping: Mapping[str, str] | None = None) -> str:
        lines = self.render_template(mapping).split("\n")
        return "\n".join(lines[: self.header_lines])

    def body(self, mapping: Mapping[str, str] | None = None) -> str:
        """The statements after the docstring, with a trailing newline (what a model completes)."""
        lines = self.render_template(mapping).split("\n")
        return "\n".join(lines[self.header_lines :]).rstrip() + "\n"

    def signature(self, mapping: Mapping[str, str] | None = None, docstring_block: object = _KEEP) -> str:
        """``def`` header plus docstring, with a trailing newline: the prompt a model completes."""
        block = self.docstring_block if docstring_block is _KEEP else docstring_block
        parts = [self.header(mapping)]
        if block:
            parts.append(block)  # type: ignore[arg-type]
        return "\n".join(parts) + "\n"

    def code(self, mapping: Mapping[str, str] | None = None, docstring_block: object = _KEEP) -> str:
        """The whole function, without a trailing newline."""
        return (self.signature(mapping, docstring_block) + self.body(mapping)).rstrip("\n")

    def declaration(self, mapping: Mapping[str, str] | None = None) -> str:
        """``name(args) -> ret`` on one line (what instruction prompts quote)."""
        node = _first_function(self.code(mapping), "<declaration>")
        node.body = [ast.Pass()]
        node.decorator_list = []
        text = ast.unparse(node)  # only for the one-line quote in an instruction, never for code we emit
        head = text.split("\n", 1)[0]
        head = head[len("async def ") :] if head.startswith("async def ") else head[len("def ") :]
        return head[:-1] if head.endswith(":") else head

    @property
    def body_indent(self) -> str:
        for line in self.body().split("\n"):
            if line.strip():
                return line[: len(line) - len(line.lstrip())]
        return "    "


# ---------------------------------------------------------------------------------------------------------
# docstrings


def docstring_block_from_text(text: str, indent: str) -> str:
    """A triple-quoted docstring statement for ``text`` (indented; blank lines stay empty).

    Backslashes are escaped so the string's value is ``text`` itself, and a closing ``"`` is escaped so it
    cannot merge with the closing quotes.
    """
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    lines = body.split("\n")
    out = [indent + '"""' + lines[0]] + [(indent + ln) if ln.strip() else "" for ln in lines[1:]]
    return "\n".join(out) + '"""'


def released_docstring_text(doc: object, record: str, field_name: str) -> str | None:
    """The released ``{description, examples}`` pair as one docstring (description, blank line, examples)."""
    if doc is None:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("description"), str):
        raise PairFormatError(record, field_name, "expected {description: str, examples: [str]} or null")
    examples = doc.get("examples") or []
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise PairFormatError(record, f"{field_name}.examples", "expected a list of strings")
    text = doc["description"].strip()
    if examples:
        text += "\n\n" + "\n".join(examples)
    return text


def comment_block(text: str, indent: str) -> str:
    """The docstring's text as ``#`` comment lines at the body's indentation."""
    return "\n".join(f"{indent}# {ln}".rstrip() for ln in text.split("\n"))


# ---------------------------------------------------------------------------------------------------------
# the released placeholder form


def from_placeholder_template(
    name: str, template: str, placeholders: Sequence[str], docstring_text: str | None, record: str, field_name: str
) -> FunctionTemplate:
    if not isinstance(template, str) or not template.strip():
        raise PairFormatError(record, f"{field_name}.template", "missing or empty")
    declared = set(placeholders)
    segments: list[str | Placeholder] = []
    pos = 0
    used: set[str] = set()
    for m in PLACEHOLDER.finditer(template):
        segments.append(template[pos : m.start()])
        used.add(m.group(1))
        segments.append(Placeholder(m.group(1)))
        pos = m.end()
    segments.append(template[pos:])
    undeclared = sorted(used - declared)
    if undeclared:
        raise PairFormatError(
            record, f"{field_name}.template", f"placeholder(s) {undeclared} not listed in {field_name}.placeholders"
        )
    rest = PLACEHOLDER.sub("", template)
    if "{{" in rest or "}}" in rest:
        raise PairFormatError(record, f"{field_name}.template", "unbalanced '{{' / '}}' outside a placeholder")
    segs = tuple(s for s in segments if s != "")
    identity = "".join(s if isinstance(s, str) else s.name for s in segs)
    node = _parse_function(identity, record, f"{field_name}.template")
    if node.name != name:
        raise PairFormatError(record, f"{field_name}.name", f"is {name!r} but the template defines {node.name!r}")
    if ast.get_docstring(node) is not None:
        raise PairFormatError(record, f"{field_name}.template", "has a docstring; the release keeps it apart")
    header = _header_line_count(identity, record, f"{field_name}.template")
    indent = _body_indent(identity, header)
    block = docstring_block_from_text(docstring_text, indent) if docstring_text is not None else None
    tmpl = FunctionTemplate(name, segs, header, block, docstring_text, frozenset(used))
    _parse_function(tmpl.code(), record, f"{field_name} (rendered with its docstring)")
    return tmpl


# ---------------------------------------------------------------------------------------------------------
# plain source -> template


def from_source(source: str, record: str, field_name: str) -> FunctionTemplate:
    """Template from one plain function definition (docstring optional).

    Placeholders are put at every identifier that binds or reads a name (``ast.Name``, parameters, ``def``/
    ``class`` names, ``global``/``nonlocal`` names, ``except ... as`` names); attribute names, keyword-argument
    names and strings are left alone.  ``extra_names`` is unused today but documents that callers may only rename
    names found here.
    """
    if not isinstance(source, str) or not source.strip():
        raise PairFormatError(record, field_name, "missing or empty")
    source = textwrap.dedent(source).strip("\n")
    node = _parse_function(source, record, field_name)
    lines = source.split("\n")
    doc_text = ast.get_docstring(node, clean=True)
    doc_block = None
    if doc_text is not None:
        expr = node.body[0]
        start, end = expr.lineno - 1, expr.end_lineno - 1  # type: ignore[operator]
        before = lines[start][: byte_col_to_char(lines[start], expr.col_offset)]
        after = lines[end][byte_col_to_char(lines[end], expr.end_col_offset or 0) :]  # type: ignore[arg-type]
        if before.strip() or after.strip() and not after.strip().startswith("#"):
            raise PairFormatError(record, field_name, "the docstring must stand on its own line(s)")
        if len(node.body) == 1:
            raise PairFormatError(record, field_name, "the function has a docstring but no body")
        doc_block = "\n".join(lines[start : end + 1])
        lines = lines[:start] + lines[end + 1 :]
        source = "\n".join(lines)
        node = _parse_function(source, record, field_name)
    header = _header_line_count(source, record, field_name)
    segments = _templatize(source, node)
    used = frozenset(s.name for s in segments if isinstance(s, Placeholder))
    return FunctionTemplate(node.name, segments, header, doc_block, doc_text, used)


def _templatize(source: str, tree: ast.AST) -> tuple[str | Placeholder, ...]:
    lines = source.split("\n")
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln) + 1)
    spots: dict[int, str] = {}

    def put(lineno: int, byte_col: int, name: str) -> None:
        line = lines[lineno - 1]
        col = byte_col_to_char(line, byte_col)
        if line[col : col + len(name)] == name:
            spots[offsets[lineno - 1] + col] = name

    def put_after(lineno: int, byte_col: int, pattern: str, name: str) -> None:
        line = lines[lineno - 1]
        col = byte_col_to_char(line, byte_col)
        m = re.compile(pattern + r"(" + re.escape(name) + r")\b").search(line, col)
        if m:
            spots[offsets[lineno - 1] + m.start(1)] = name

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            put(node.lineno, node.col_offset, node.id)
        elif isinstance(node, ast.arg):
            put(node.lineno, node.col_offset, node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            put_after(node.lineno, node.col_offset, r"def\s+", node.name)
        elif isinstance(node, ast.ClassDef):
            put_after(node.lineno, node.col_offset, r"class\s+", node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            put_after(node.lineno, node.col_offset, r"\bas\s+", node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            line = lines[node.lineno - 1]
            for nm in node.names:
                for m in re.finditer(r"\b" + re.escape(nm) + r"\b", line[byte_col_to_char(line, node.col_offset) :]):
                    spots[offsets[node.lineno - 1] + byte_col_to_char(line, node.col_offset) + m.start()] = nm
    segments: list[str | Placeholder] = []
    pos = 0
    for start in sorted(spots):
        name = spots[start]
        if start < pos:
            continue
        segments.append(source[pos:start])
        segments.append(Placeholder(name))
        pos = start + len(name)
    segments.append(source[pos:])
    return tuple(s for s in segments if s != "")


# ---------------------------------------------------------------------------------------------------------
# exact-rename check


class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping: Mapping[str, str]) -> None:
        self.m = mapping

    def _r(self, name: str) -> str:
        return self.m.get(name, name)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._r(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._r(node.arg)
        self.generic_visit(node)
        return node

    def _def(self, node):  # type: ignore[no-untyped-def]
        node.name = self._r(node.name)
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _def

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        if node.name:
            node.name = self._r(node.name)
        self.generic_visit(node)
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [self._r(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global  # type: ignore[assignment]


def rename_is_exact(template: FunctionTemplate, mapping: Mapping[str, str]) -> bool:
    """True iff rendering with ``mapping`` equals renaming those identifiers in the syntax tree.

    This catches a name that has an occurrence the template does not mark (an ``except ... as e`` the release
    left unmarked, say): renaming the marked ones only would change what the code means.
    """
    try:
        renamed = ast.parse(template.render_template(mapping))
        expected = _Renamer(mapping).visit(ast.parse(template.render_template()))
    except SyntaxError:
        return False
    return ast.dump(renamed) == ast.dump(expected)


# ---------------------------------------------------------------------------------------------------------
# helpers


def identifiers(code: str) -> set[str]:
    """Every NAME token of ``code`` (identifiers, keywords, attribute names): what a fresh name must avoid."""
    out: set[str] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.NAME:
                out.add(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        out.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    return out


def _parse_function(code: str, record: str, field_name: str) -> ast.FunctionDef:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise PairFormatError(record, field_name, f"does not parse: {exc.msg} (line {exc.lineno})") from None
    funcs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(tree.body) != 1 or len(funcs) != 1:
        raise PairFormatError(record, field_name, "expected exactly one top-level function definition")
    return funcs[0]  # type: ignore[return-value]


def _first_function(code: str, where: str) -> ast.FunctionDef:
    return _parse_function(code, where, "code")


def _header_line_count(code: str, record: str, field_name: str) -> int:
    """Lines up to the colon that ends the ``def`` signature; the body must start on a new line."""
    depth = 0
    seen_def = False
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
            if tok.type == tokenize.NAME and tok.string == "def" and depth == 0:
                seen_def = True
            elif tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif seen_def and depth == 0 and tok.type == tokenize.OP and tok.string == ":":
                rest = code.split("\n")[tok.end[0] - 1][tok.end[1] :]
                if rest.strip() and not rest.strip().startswith("#"):
                    raise PairFormatError(record, field_name, "the body must start on the line after the signature")
                return tok.end[0]
    except tokenize.TokenError as exc:
        raise PairFormatError(record, field_name, f"does not tokenize: {exc}") from None
    raise PairFormatError(record, field_name, "no ':' ends the def signature")


def _body_indent(code: str, header_lines: int) -> str:
    for line in code.split("\n")[header_lines:]:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return "    "
