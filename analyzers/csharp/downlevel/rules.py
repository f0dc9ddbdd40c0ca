
"""The rewrite rules behind ``downlevel.downlevel``: one function per construct, each adding edits to a
``Ctx``.  Only what mcs (mono 6.8, ``-langversion:experimental``) rejects is rewritten."""

from __future__ import annotations

import re
from functools import lru_cache

from benchsmith import treesitter

from benchsmith.analyzers.csharp.downlevel.edits import Construct as C
from benchsmith.analyzers.csharp.downlevel.edits import HELPER_FILE
from benchsmith.analyzers.csharp.downlevel.core import Ctx, Rep, child_of_type

PREDEFINED_REFERENCE = frozenset({"string", "object", "dynamic"})
# BCL value types commonly written with ``?``: their ``?`` is Nullable<T> and must stay
BCL_VALUE_TYPES = frozenset({
    "Boolean", "Byte", "SByte", "Char", "Decimal", "Double", "Single", "Int16", "Int32", "Int64", "UInt16", "UInt32",
    "UInt64", "IntPtr", "UIntPtr", "DateTime", "DateTimeOffset", "TimeSpan", "Guid", "CancellationToken",
    "KeyValuePair", "ValueTuple", "Nullable", "Span", "ReadOnlySpan", "Memory", "ReadOnlyMemory", "ArraySegment",
    "ValueTask", "Half", "Int128", "UInt128", "BigInteger", "Complex", "DateOnly", "TimeOnly", "Index", "Range",
    "Color", "Point", "PointF", "Size", "SizeF", "Rectangle", "RectangleF", "Vector2", "Vector3", "Vector4",
    "Matrix4x4", "Quaternion", "HandleRef", "RuntimeTypeHandle", "RuntimeMethodHandle", "RuntimeFieldHandle",
    "GCHandle", "JsonElement", "JsonDocumentOptions", "ImmutableArray", "SequencePosition", "StreamingContext",
    "NativeLong", "CLong", "CULong", "NFloat", "ConsoleKeyInfo", "ConsoleColor", "DayOfWeek", "TypeCode",
    "StringComparison", "BindingFlags", "MethodImplOptions", "FileMode", "FileAccess", "FileShare", "SeekOrigin",
    "Encoding", "NumberStyles", "DateTimeKind", "LayoutKind", "CharSet", "CallingConvention", "UnmanagedType",
    "GCHandleType", "AttributeTargets", "TaskStatus", "TaskCreationOptions", "RegexOptions", "StringSplitOptions",
    "MidpointRounding", "PlatformID", "Architecture", "OSPlatform", "HttpStatusCode", "ThreadState",
    "ApartmentState", "ThreadPriority", "EventResetMode", "LazyThreadSafetyMode"})
BCL_VALUE_TYPES = BCL_VALUE_TYPES - {"Encoding"}  # a class

# One query per file finds every node a rule looks at; frequent kinds are narrowed to the token that makes them
# a rewrite candidate (``!`` postfix, ``??=``, ``using`` locals ...), so C# 7 code costs one cheap query.
QUERY_PATTERNS = (
    "(file_scoped_namespace_declaration) @file_scoped_namespace_declaration",
    '(using_directive "global") @using_directive',
    "(preproc_nullable) @preproc_nullable",
    "(nullable_type) @nullable_type",
    '(postfix_unary_expression "!") @postfix_unary_expression',
    "(implicit_object_creation_expression) @implicit_object_creation_expression",
    "(is_pattern_expression) @is_pattern_expression",
    "(switch_expression) @switch_expression",
    "(switch_statement) @switch_statement",
    "(record_declaration) @record_declaration",
    '(accessor_declaration "init") @accessor_declaration',
    '(modifier ["file" "required" "scoped" "readonly"]) @modifier',
    "(class_declaration (parameter_list)) @class_declaration",
    "(struct_declaration) @struct_declaration",
    '(local_declaration_statement "using") @local_declaration_statement',
    "(local_function_statement) @local_function_statement",
    "(lambda_expression) @lambda_expression",
    "(anonymous_method_expression (modifier)) @anonymous_method_expression",
    "(range_expression) @range_expression",
    '(prefix_unary_expression "^") @prefix_unary_expression',
    '(assignment_expression operator: "??=") @assignment_expression',
    "(raw_string_literal) @raw_string_literal",
    "(string_literal (string_literal_encoding)) @string_literal",
    "(interpolated_string_expression) @interpolated_string_expression",
    "(collection_expression) @collection_expression",
    "(interface_declaration) @interface_declaration",
    "(with_expression) @with_expression",
    "(global_statement) @global_statement",
    "(enum_declaration) @enum_declaration",
    "(type_parameter_constraints_clause) @type_parameter_constraints_clause",
    "(function_pointer_type) @function_pointer_type",
    "(pointer_type type: (identifier)) @pointer_type",
    '(binary_expression operator: ">>>") @unsigned_shift',
    '(assignment_expression operator: ">>>=") @unsigned_shift',
    '(foreach_statement "await") @await_statement',
    '(using_statement "await") @await_statement',
    "(attribute name: (generic_name)) @generic_attribute",
    "(lambda_expression (attribute_list)) @lambda_attributes",
    "(lambda_expression type: (_)) @lambda_return_type",
    "(class_declaration (type_parameter_list) (base_list)) @generic_class",
    "(ref_type) @ref_type",
    "(parameter (modifier) (modifier)) @ref_receiver",  # (modifiers are leaves: the rule reads their text)
    "(tuple_type) @tuple_type",
    "(tuple_expression) @tuple_expression",
    '(modifier "async") @async_modifier',
    "(foreach_statement left: (tuple_pattern)) @foreach_deconstruction",
    "(foreach_statement left: (tuple_expression)) @foreach_deconstruction",
)


GRAMMAR = "tree_sitter_c_sharp"


def _query():
    return treesitter.query_of_patterns(GRAMMAR, QUERY_PATTERNS)  # compiled once per process


def parse(text: str):
    return treesitter.parser(GRAMMAR).parse(text.encode("utf-8"))


_NATIVE_INT = re.compile(rb"nu?int\b")  # the node test below rejects a match inside a longer word


def captures(tree, text: str) -> dict[str, list]:
    """What the rules look at in ``tree`` (of ``text``), by capture name, in source order: one walk of the tree in
    C (the project's value types are read from it too, ``value_types_of``).  ``nint`` and ``nuint`` are found in
    the text instead: a query predicate would test each of the thousands of predefined types in Python."""
    from tree_sitter import QueryCursor

    caps = QueryCursor(_query()).captures(tree.root_node)
    out = {k: sorted(v, key=lambda n: n.start_byte) for k, v in caps.items()}
    if "nint" in text or "nuint" in text:
        root, found = tree.root_node, []
        for m in _NATIVE_INT.finditer(text.encode("utf-8")):
            n = root.descendant_for_byte_range(m.start(), m.end())
            if n is not None and n.type == "predefined_type" and n.start_byte == m.start() and n.end_byte == m.end():
                found.append(n)
        if found:
            out["native_int"] = found
    return out


def value_types_of(caps) -> set[str]:
    """Simple names of the structs, enums and record structs among ``captures(tree, text)`` (a ``Foo?`` of these is
    ``Nullable``)."""
    names = set()
    for kind in ("struct_declaration", "enum_declaration", "record_declaration"):
        for n in caps.get(kind, []):
            if kind == "record_declaration" and child_of_type(n, "struct") is None:
                continue
            name = n.child_by_field_name("name")
            if name is not None:
                names.add(name.text.decode("utf-8", "replace"))
    return names


@lru_cache(maxsize=1)
def _rules() -> tuple:
    """The rules in the order they run (the rule modules import this one, so they are looked up on first use).
    Token-level rules first: the rules that copy types (new(), records, local functions ...) copy them with the
    token edits inside applied (``Rep.copy_edited``); default interface members last: they move others' edits."""
    from benchsmith.analyzers.csharp.downlevel import (local_functions, mcs_gaps, members, patterns, scopes, switch,
                                                       targets)
    from benchsmith.analyzers.csharp.downlevel import tokens as tok

    return (_file_scoped_namespace, _global_using, _nullable_directive, _nullable_types, tok.null_forgiving,
            tok.newer_syntax, tok.function_pointers, tok.type_parameter_pointers, tok.constraints,
            tok.misc_modifiers, targets.target_typed_new, tok.using_declaration, tok.static_modifiers,
            tok.ranges, tok.coalescing_assignment, tok.strings, targets.collection_expressions,
            targets.with_expressions, mcs_gaps.long_tuples, mcs_gaps.ref_returns, mcs_gaps.ref_receivers,
            mcs_gaps.nested_tuple_types,
            mcs_gaps.task_like_async, mcs_gaps.foreach_deconstruction,
            patterns.is_patterns, switch.switch_expressions, switch.switch_statements,
            scopes.shadowed_parameters,
            members.records, members.primary_constructors, members.struct_parameterless_ctors, members.accessors, local_functions.local_functions,
            members.default_interface_members, _top_level)


# ------------------------------------------------------------------------------------------------------------
def collect_edits(text, tree, *, global_usings=(), value_types=frozenset(), caps=None):
    """``caps``: ``captures(tree, text)`` when the caller has them already."""
    if tree is None:
        tree = parse(text)
    ctx = Ctx(text, tree)
    if caps is None:
        caps = captures(tree, text)
    ctx.caps = caps
    ctx.value_types = BCL_VALUE_TYPES | value_types | _local_value_types(ctx, caps)
    if global_usings:
        _insert_global_usings(ctx, global_usings)
    for rule in _rules():
        before = len(ctx.edits), ctx.group
        try:
            rule(ctx, caps)
        except Exception:  # a rule's bug on odd input: its rewrites are dropped and the loss recorded, never a crash
            ctx.edits = [e for e in ctx.edits if e[6] <= before[1]]
            ctx.unsupported_at(0, C.OTHER)
    edits = ctx.finish()
    helpers = [HELPER_FILE] if ctx.helpers and edits else []
    return edits, ctx.unsupported, helpers, ctx.lossy


def _local_value_types(ctx, caps) -> frozenset[str]:
    names = value_types_of(caps)
    # type parameters constrained to value types: ``T?`` is Nullable<T> for them
    for clause in caps.get("type_parameter_constraints_clause", []):
        body = ctx.src(clause)
        m = re.match(r"where\s+(\w+)\s*:\s*(struct|unmanaged)\b", body)
        if m:
            names.add(m.group(1))
    return frozenset(names)


def declared_value_types(text: str, tree=None) -> frozenset[str]:
    """Simple names of the structs and enums ``text`` declares (the analyzer unions these over the project and
    passes them to ``downlevel`` as ``value_types``)."""
    if tree is None:
        tree = parse(text)
    return frozenset(n for n in _local_value_types(Ctx(text, tree), captures(tree, text)) if n)


# ------------------------------------------------------------------------------------------------------------
def _file_scoped_namespace(ctx: Ctx, caps) -> None:
    for ns in caps.get("file_scoped_namespace_declaration", []):
        semi = child_of_type(ns, ";")
        if semi is None:
            continue
        ctx.new_group()
        s, e = ctx.span(semi)
        ctx.edit(s, e, "{", C.FILE_SCOPED_NAMESPACE)
        end = len(ctx.text)
        ctx.insert(end, "}" if ctx.text.endswith("\n") else "\n}", C.FILE_SCOPED_NAMESPACE)


def _global_using(ctx: Ctx, caps) -> None:
    for u in caps.get("using_directive", []):
        g = child_of_type(u, "global")
        if g is not None:
            ctx.new_group()
            ctx.blank(*ctx.span(g), C.GLOBAL_USING)


def global_using_directives(text, tree=None) -> list[str]:
    if "global" not in text:
        return []
    if tree is None:
        tree = parse(text)
    ctx = Ctx(text, tree)
    out = []
    # global usings are compilation-unit members (before any namespace member), so the root's children suffice
    for u in tree.root_node.children:
        if u.type != "using_directive":
            continue
        g = child_of_type(u, "global")
        if g is not None:
            s, e = ctx.span(u)
            rest = ctx.text[ctx.span(g)[1]:e]
            out.append(re.sub(r"\s+", " ", rest).strip())
    return out


def _insert_global_usings(ctx: Ctx, directives) -> None:
    root = ctx.tree.root_node
    at = None
    for c in root.children:
        if c.type in ("extern_alias_directive", "comment") or c.type.startswith("preproc"):
            continue
        at = ctx.span(c)[0]
        break
    if at is None:
        return
    ctx.new_group()
    ctx.insert(at, " ".join(d.strip() for d in directives) + " ", C.GLOBAL_USING)


def _nullable_directive(ctx: Ctx, caps) -> None:
    for d in caps.get("preproc_nullable", []):
        ctx.new_group()
        s, e = ctx.span(d)
        seg = ctx.text[s:e]
        keep = len(seg) - len(seg.rstrip("\r\n"))
        ctx.blank(s, e - keep, C.NULLABLE_DIRECTIVE)


def is_reference_nullable(ctx: Ctx, node) -> bool:
    """``T?`` whose ``?`` mcs would read as Nullable<T> of a reference type (C# 8 nullable reference type)."""
    t = node.child_by_field_name("type") or (node.named_children[0] if node.named_children else None)
    if t is None:
        return False
    if t.type == "predefined_type":
        return ctx.src(t) in PREDEFINED_REFERENCE
    if t.type in ("tuple_type", "pointer_type", "function_pointer_type"):
        return False
    if t.type == "array_type":
        return True
    name = t
    if name.type == "qualified_name":
        name = name.child_by_field_name("name") or name
    if name.type == "alias_qualified_name":
        name = name.child_by_field_name("name") or name
    if name.type == "generic_name":
        name = name.named_children[0] if name.named_children else name
    return ctx.src(name) not in ctx.value_types


def _nullable_types(ctx: Ctx, caps) -> None:
    for n in caps.get("nullable_type", []):
        if is_reference_nullable(ctx, n):
            q = n.children[-1]
            if q.type == "?":
                ctx.new_group()
                ctx.blank(*ctx.span(q), C.NULLABLE_ANNOTATION)


def type_pieces(ctx: Ctx, node) -> Rep:
    """A copy of a type's text with the token rewrites inside it applied (the reference-type ``?`` blanked,
    ``nint`` -> IntPtr, a function pointer -> IntPtr ...); a nullable reference type copies as its inner type."""
    if node.type == "nullable_type" and is_reference_nullable(ctx, node):
        node = node.child_by_field_name("type") or node.named_children[0]
    return Rep(ctx).copy_edited(*ctx.span(node))


def _rep_pieces(rep: Rep) -> list[tuple[int, int, str]]:
    """A Rep's parts back as (orig start, orig end, text) pieces for another Rep (anchors kept)."""
    out, pos = [], 0
    anchors = {r: (o, n) for r, o, n in rep.anchors}
    for part in rep.parts:
        if pos in anchors:
            o, n = anchors[pos]
            out.append((o, o + n, part))
        else:
            out.append((-1, -1, part))
        pos += len(part)
    return out


def _top_level(ctx: Ctx, caps) -> None:
    stmts = caps.get("global_statement", [])
    if stmts:
        ctx.unsupported_at(ctx.span(stmts[0])[0], C.TOP_LEVEL_STATEMENTS)
