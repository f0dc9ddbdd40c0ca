"""The rewrite rules behind ``csharp_downlevel.downlevel``: one function per construct, each adding edits to a
``Ctx``.  Only what mcs (mono 6.8, ``-langversion:experimental``) rejects is rewritten."""

from __future__ import annotations

import re
from functools import lru_cache

from benchsmith.analyzers.csharp_downlevel import Construct as C
from benchsmith.analyzers.csharp_downlevel_core import (HELPER, HELPER_FILE, Ctx, Rep, ancestor, child_of_type,
                                                        children_of_type)

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
    '((predefined_type) @native_int (#any-of? @native_int "nint" "nuint"))',
    '(binary_expression operator: ">>>") @unsigned_shift',
    '(assignment_expression operator: ">>>=") @unsigned_shift',
    '(foreach_statement "await") @await_statement',
    '(using_statement "await") @await_statement',
    "(attribute name: (generic_name)) @generic_attribute",
    "(lambda_expression (attribute_list)) @lambda_attributes",
    "(lambda_expression type: (_)) @lambda_return_type",
    "(class_declaration (type_parameter_list) (base_list)) @generic_class",
)


@lru_cache(maxsize=1)
def _language():
    import tree_sitter_c_sharp
    from tree_sitter import Language

    return Language(tree_sitter_c_sharp.language())


@lru_cache(maxsize=1)
def _query():
    from tree_sitter import Query

    lang = _language()
    ok = []
    for pattern in QUERY_PATTERNS:
        try:  # another grammar version may lack a node kind or token: that rule then sees nothing
            Query(lang, pattern)
        except Exception:  # noqa: BLE001 - tree_sitter raises QueryError subclasses
            continue
        ok.append(pattern)
    return Query(lang, " ".join(ok))


def parse(text: str):
    from tree_sitter import Parser

    return Parser(_language()).parse(text.encode("utf-8"))


def _captures(tree) -> dict[str, list]:
    from tree_sitter import QueryCursor

    caps = QueryCursor(_query()).captures(tree.root_node)
    return {k: sorted(v, key=lambda n: n.start_byte) for k, v in caps.items()}


# ------------------------------------------------------------------------------------------------------------
def collect_edits(text, tree, *, global_usings=(), value_types=frozenset()):
    if tree is None:
        tree = parse(text)
    ctx = Ctx(text, tree)
    caps = _captures(tree)
    ctx.caps = caps
    ctx.value_types = BCL_VALUE_TYPES | value_types | _local_value_types(ctx, caps)
    from benchsmith.analyzers import csharp_downlevel_members as members
    from benchsmith.analyzers import csharp_downlevel_patterns as patterns
    from benchsmith.analyzers import csharp_downlevel_scopes as scopes

    if global_usings:
        _insert_global_usings(ctx, global_usings)
    # Token-level rules first: the rules that copy types (new(), records, local functions ...) copy them with the
    # token edits inside applied (``Rep.copy_edited``).
    for rule in (_file_scoped_namespace, _global_using, _nullable_directive, _nullable_types, _null_forgiving,
                 _newer_syntax, _function_pointers, _type_parameter_pointers, _constraints, _misc_modifiers,
                 _target_typed_new, _using_declaration, _static_modifiers, _ranges, _coalescing_assignment,
                 _strings, _collection_expressions, _with_expressions,
                 patterns.is_patterns, patterns.switch_expressions, patterns.switch_statements,
                 scopes.shadowed_parameters,
                 members.records, members.primary_constructors, members.accessors, members.local_functions,
                 members.default_interface_members, _top_level):  # interface members last: they move others' edits
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
    names = set()
    for kind in ("struct_declaration", "enum_declaration", "record_declaration"):
        for n in caps.get(kind, []):
            if kind == "record_declaration" and child_of_type(n, "struct") is None:
                continue
            name = n.child_by_field_name("name")
            if name is not None:
                names.add(ctx.src(name))
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
    ctx = Ctx(text, tree)
    caps = _captures(tree)
    return frozenset(n for n in _local_value_types(ctx, caps) if n)


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


def _null_forgiving(ctx: Ctx, caps) -> None:
    for n in caps.get("postfix_unary_expression", []):
        last = n.children[-1] if n.children else None
        if last is not None and last.type == "!":
            ctx.new_group()
            ctx.blank(*ctx.span(last), C.NULL_FORGIVING)


_SCOPES = frozenset({"block", "switch_section", "method_declaration", "local_function_statement",
                     "constructor_declaration", "lambda_expression", "anonymous_method_expression",
                     "class_declaration", "struct_declaration", "record_declaration", "interface_declaration",
                     "accessor_declaration", "operator_declaration", "indexer_declaration", "for_statement",
                     "using_statement", "compilation_unit"})
_TYPE_BODIES = frozenset({"class_declaration", "struct_declaration", "record_declaration", "interface_declaration"})


def _declared_in(ctx: Ctx, scope, name: str):
    """The explicit type ``name`` is declared with directly in ``scope`` (local, parameter, field, property)."""
    kids = list(scope.children)
    body = scope.child_by_field_name("body")
    if scope.type in _TYPE_BODIES and body is not None:
        kids = list(body.children)
    plist = scope.child_by_field_name("parameters") or child_of_type(scope, "parameter_list")
    if plist is not None:
        for p in plist.named_children:
            pn = p.child_by_field_name("name")
            if p.type == "parameter" and pn is not None and ctx.src(pn) == name:
                return p.child_by_field_name("type")
    for k in kids:
        if k.type in ("local_declaration_statement", "field_declaration", "variable_declaration"):
            decl = k if k.type == "variable_declaration" else child_of_type(k, "variable_declaration")
            if decl is None:
                continue
            t = decl.child_by_field_name("type")
            for v in decl.named_children:
                vn = v.child_by_field_name("name") if v.type == "variable_declarator" else None
                if vn is not None and ctx.src(vn) == name:
                    return t if t is not None and t.type != "implicit_type" else None
        elif k.type == "property_declaration":
            pn = k.child_by_field_name("name")
            if pn is not None and ctx.src(pn) == name:
                return k.child_by_field_name("type")
    return None


def _type_of_name(ctx: Ctx, target, at):
    """The declared type of an assignment target (``x``, ``this.x``) seen from ``at``: locals and parameters of
    the enclosing scopes, then members of the enclosing types."""
    if target.type == "member_access_expression":
        obj = target.child_by_field_name("expression")
        if obj is None or obj.type != "this_expression" and ctx.src(obj) != "this":
            return None
        target = target.child_by_field_name("name")
    if target is None or target.type != "identifier":
        return None
    name = ctx.src(target)
    n = at.parent
    while n is not None:
        if n.type in _SCOPES:
            t = _declared_in(ctx, n, name)
            if t is not None:
                return t
        n = n.parent
    return None


def target_type(ctx: Ctx, node):
    """The declared type an expression converts to: initializers, defaults, returns, arrow bodies, assignments,
    ``??`` right operands, conditional branches, array initializer elements; None when not visible here."""
    p = node.parent
    if p is None:
        return None
    if p.type == "parenthesized_expression":
        return target_type(ctx, p)
    if p.type == "variable_declarator":
        decl = p.parent
        t = decl.child_by_field_name("type") if decl is not None else None
        if t is not None and t.type != "implicit_type":
            return t
        return None
    if p.type in ("property_declaration", "parameter"):
        return p.child_by_field_name("type")
    if p.type == "assignment_expression" and p.child_by_field_name("right") == node:
        return _type_of_name(ctx, p.child_by_field_name("left"), p)
    if p.type == "binary_expression" and p.child_by_field_name("right") == node and \
            p.child_by_field_name("operator") is not None and p.child_by_field_name("operator").type == "??":
        return target_type(ctx, p) or _type_of_name(ctx, p.child_by_field_name("left"), p)
    if p.type == "conditional_expression" and node != p.child_by_field_name("condition"):
        return target_type(ctx, p)
    if p.type == "initializer_expression":
        owner = p.parent
        t = None
        if owner is not None and owner.type == "array_creation_expression":
            t = owner.child_by_field_name("type")
        elif owner is not None and owner.type == "variable_declarator":
            decl = owner.parent
            t = decl.child_by_field_name("type") if decl is not None else None
        if t is not None and t.type == "array_type":
            return t.child_by_field_name("type")
        return None
    if p.type == "arrow_expression_clause":
        owner = p.parent
    elif p.type == "return_statement":
        owner = ancestor(p, "method_declaration", "local_function_statement", "lambda_expression",
                         "anonymous_method_expression", "accessor_declaration", "property_declaration",
                         "constructor_declaration", "operator_declaration", "conversion_operator_declaration")
    else:
        return None
    if owner is None:
        return None
    if owner.type == "accessor_declaration":
        if ctx.src(owner).lstrip().split("{")[0].strip().split()[-1:] != ["get"] and \
                not ctx.src(owner).lstrip().startswith("get"):
            return None
        owner = ancestor(owner, "property_declaration", "indexer_declaration")
        if owner is None:
            return None
    if owner.type in ("method_declaration", "local_function_statement"):
        t = owner.child_by_field_name("returns") or owner.child_by_field_name("type")
        if t is not None and ctx.src(t) != "void" and not any(ctx.src(m) == "async" for m in
                                                                children_of_type(owner, "modifier")):
            return t
        return None
    if owner.type in ("property_declaration", "indexer_declaration", "operator_declaration",
                      "conversion_operator_declaration"):
        return owner.child_by_field_name("type")
    return None


def _target_typed_new(ctx: Ctx, caps) -> None:
    for n in caps.get("implicit_object_creation_expression", []):
        kw = child_of_type(n, "new")
        if kw is None:
            continue
        t = target_type(ctx, n)
        if t is not None and t.type == "nullable_type" and not is_reference_nullable(ctx, t):
            t = None  # ``Point? p = new()`` is a new Point; rare enough to take the fallback below
        ctx.new_group()
        s, e = ctx.span(kw)
        if t is None or t.type in ("array_type", "tuple_type", "pointer_type", "function_pointer_type"):
            # the type is not visible in this file: ``Any(args)`` (dynamic) keeps the arguments' names visible and
            # converts to whatever the target is; an object initializer's member names cannot follow
            ctx.helpers.add(HELPER_FILE)
            ctx.edit(s, e, HELPER + ".Any", C.TARGET_TYPED_NEW)
            init = child_of_type(n, "initializer_expression")
            if child_of_type(n, "argument_list") is None:
                ctx.insert(e, "()", C.TARGET_TYPED_NEW)
            if init is not None:
                ctx.blank(*ctx.span(init), C.TARGET_TYPED_NEW)
                ctx.lossy_at(ctx.span(init)[0], C.TARGET_TYPED_NEW)
            continue
        ctx.edit(s, e, Rep(ctx).copy(s, e).lit(" ").copy_pieces(_rep_pieces(type_pieces(ctx, t))),
                 C.TARGET_TYPED_NEW)


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


def _using_declaration(ctx: Ctx, caps) -> None:
    for n in caps.get("local_declaration_statement", []):
        u = child_of_type(n, "using")
        if u is None:
            continue
        ctx.new_group()
        s, e = ctx.span(u)
        aw = child_of_type(n, "await")
        if aw is not None and aw.start_byte < u.start_byte:
            s = ctx.span(aw)[0]
        ctx.blank(s, e, C.USING_DECLARATION)


def _static_modifiers(ctx: Ctx, caps) -> None:
    for n in caps.get("lambda_expression", []) + caps.get("anonymous_method_expression", []):
        for m in n.children:
            if m.type != "modifier":
                continue
            if ctx.src(m) == "static":
                ctx.new_group()
                ctx.blank(*ctx.span(m), C.STATIC_LAMBDA)


def _misc_modifiers(ctx: Ctx, caps) -> None:
    """``file`` types -> internal (blank), ``required`` members (blank), ``readonly`` struct members (blank),
    ``scoped`` parameters and locals (blank)."""
    for m in caps.get("modifier", []):
        word = ctx.src(m)
        p = m.parent
        construct = None
        if word == "file" and p is not None and p.type.endswith("_declaration"):
            construct = C.FILE_TYPE
        elif word == "required":
            construct = C.REQUIRED_MEMBER
        elif word == "scoped":
            construct = C.SCOPED
        elif word == "readonly" and p is not None and p.type in ("method_declaration", "property_declaration",
                                                                 "indexer_declaration", "accessor_declaration",
                                                                 "event_declaration"):
            construct = C.READONLY_MEMBER
        if construct is not None:
            ctx.new_group()
            ctx.blank(*ctx.span(m), construct)


def _ranges(ctx: Ctx, caps) -> None:
    seen = set()
    for r in caps.get("range_expression", []):
        arg = r.parent
        acc = arg.parent.parent if arg is not None and arg.type == "argument" and arg.parent is not None else None
        if ancestor(r, "list_pattern", "is_pattern_expression", "switch_expression_arm", "switch_section",
                    "subpattern") is not None and ancestor(r, "element_access_expression") is None:
            continue  # a slice ``..`` of a list pattern: the pattern rewrite owns it
        if acc is None or acc.type != "element_access_expression" or len(arg.parent.named_children) != 1:
            # a Range value of its own (``Range r = 1..^2``): Any(lo, hi) keeps the bounds and converts to it
            ctx.new_group()
            ctx.helpers.add(HELPER_FILE)
            rs, re_ = ctx.span(r)
            ops = [c for c in r.children if c.type == ".."]
            lo = r.children[0] if r.children and r.children[0].type != ".." else None
            hi = r.children[-1] if r.children and r.children[-1].type != ".." else None
            ctx.insert(rs, HELPER + ".Any(", C.RANGE, -1, (rs, re_))
            if ops:
                ctx.edit(*ctx.span(ops[0]), ", " if lo is not None and hi is not None else "", C.RANGE)
            ctx.insert(re_, ")", C.RANGE, 0, (rs, re_))
            for side in (lo, hi):
                if side is not None and side.type == "prefix_unary_expression" and side.children[0].type == "^":
                    seen.add(side.id)
                    ctx.blank(*ctx.span(side.children[0]), C.RANGE)
            continue
        # a[x..y] -> Keep(a, x, y): the value keeps a's type (an array, string or span slice is one), the bounds
        # stay visible
        subject = acc.child_by_field_name("expression")
        brackets = arg.parent
        ctx.new_group()
        ctx.helpers.add(HELPER_FILE)
        s0 = ctx.span(acc)[0]
        ctx.insert(s0, HELPER + ".Keep(", C.RANGE, -1, ctx.span(acc))
        bs, be = ctx.span(brackets)
        ops = [c for c in r.children if c.type == ".."]
        lo = r.children[0] if r.children and r.children[0].type != ".." else None
        hi = r.children[-1] if r.children and r.children[-1].type != ".." else None
        ctx.edit(bs, bs + 1, ", " if lo is not None else "", C.RANGE)
        if ops:
            os_, oe = ctx.span(ops[0])
            ctx.edit(os_, oe, ", " if (hi is not None and lo is not None) or (hi is not None) else "", C.RANGE)
        ctx.edit(be - 1, be, ")", C.RANGE)
        for side in (lo, hi):
            if side is not None and side.type == "prefix_unary_expression" and side.children[0].type == "^":
                seen.add(side.id)
                ctx.blank(*ctx.span(side.children[0]), C.RANGE)
        _ = subject
    for p in caps.get("prefix_unary_expression", []):
        if p.id in seen or not p.children or p.children[0].type != "^":
            continue
        # a[^1] -> a[ 1]: the element type is what name resolution needs
        ctx.new_group()
        ctx.blank(*ctx.span(p.children[0]), C.INDEX_FROM_END)


def _coalescing_assignment(ctx: Ctx, caps) -> None:
    for a in caps.get("assignment_expression", []):
        op = a.child_by_field_name("operator")
        if op is not None and op.type == "??=":
            ctx.new_group()
            s, e = ctx.span(op)
            ctx.edit(s, e, "=  ", C.NULL_COALESCING_ASSIGNMENT)


def _strings(ctx: Ctx, caps) -> None:
    """Raw string literals -> a verbatim string of the same lines (content blanked); interpolated raw strings ->
    ``$@"{a}{b}"`` with every hole's expression in place; ``"x"u8`` -> the bytes of ``"x"`` (a byte[], which
    converts to ReadOnlySpan<byte>)."""
    text = ctx.text
    for n in caps.get("raw_string_literal", []):
        ctx.new_group()
        s, e = ctx.span(n)
        _blank_string(ctx, s, e, '@"', '"', C.RAW_STRING)
    for n in caps.get("interpolated_string_expression", []):
        s, e = ctx.span(n)
        if not re.match(r'@?\$+@?"""', text[s:e]):
            continue
        ctx.new_group()
        holes = []
        for h in children_of_type(n, "interpolation"):
            inner = [c for c in h.children if c.type not in ("{", "}", "interpolation_brace")]
            if inner:
                holes.append((ctx.span(inner[0])[0], ctx.span(inner[-1])[1]))
        cuts = [s] + [x for hole in holes for x in hole] + [e]
        # mcs misplaces diagnostics inside ``$@""``: a one-line raw string becomes a plain ``$""``
        opener = '$@"' if "\n" in text[s:e] else '$"'
        for i in range(0, len(cuts), 2):
            head = opener if i == 0 else "}"
            tail = '"' if i == len(cuts) - 2 else "{"
            _blank_string(ctx, cuts[i], cuts[i + 1], head, tail, C.RAW_STRING)
    for n in caps.get("string_literal", []):
        s, e = ctx.span(n)
        if text[e - 2:e] in ("u8", "U8") and text[e - 3:e - 2] == '"':
            ctx.new_group()
            ctx.insert(s, "global::System.Text.Encoding.UTF8.GetBytes(", C.UTF8_STRING, -1, (s, e))
            ctx.edit(e - 2, e, ")", C.UTF8_STRING)


def _blank_string(ctx: Ctx, s: int, e: int, head: str, tail: str, construct) -> None:
    """``[s, e)`` -> ``head`` + spaces (newlines kept) + ``tail`` in one edit, as long as the span when it fits."""
    body = "".join(ch if ch in "\r\n" else " " for ch in ctx.text[s:e])
    nl = body.find("\n")
    first = len(body) if nl < 0 else nl
    body = head + body[len(head):] if first >= len(head) else head + body
    last_nl = body.rfind("\n")
    room = len(body) - max(last_nl + 1, len(head) if last_nl < 0 else 0)
    body = body[:len(body) - len(tail)] + tail if room >= len(tail) else body + tail
    ctx.edit(s, e, body, construct)


def _collection_expressions(ctx: Ctx, caps) -> None:
    """``[a, b]`` -> ``new T[] {a, b}`` / ``new List<T> {a, b}`` from the target type; with spreads
    ``Keep(new T[0], a, xs, b)`` (the value keeps the target's type, every element stays visible); with no
    visible target ``Any(a, b)`` (dynamic)."""
    for n in caps.get("collection_expression", []):
        t = target_type(ctx, n)
        s, e = ctx.span(n)
        if t is not None and t.type == "nullable_type":
            t = t.child_by_field_name("type") or t.named_children[0]
        spreads = [c for c in n.named_children if c.type == "spread_element"] + [
            c for el in n.named_children if el.type == "collection_element" for c in el.named_children
            if c.type == "spread_element"]
        ctx.new_group()
        if t is None or t.type in ("tuple_type", "pointer_type", "function_pointer_type"):
            ctx.helpers.add(HELPER_FILE)
            ctx.edit(s, s + 1, HELPER + ".Any(", C.COLLECTION_EXPRESSION)
            ctx.edit(e - 1, e, ")", C.COLLECTION_EXPRESSION)
            for sp in spreads:
                ctx.blank(*ctx.span(sp.children[0]), C.COLLECTION_EXPRESSION)
            continue
        elem = None if t.type == "array_type" else _element_type(ctx, t)
        rep = Rep(ctx)
        if spreads:
            ctx.helpers.add(HELPER_FILE)
            rep.lit(HELPER + ".Keep(")
        rep.lit("new ")
        if t.type == "array_type":
            inner = t.child_by_field_name("type") or t.named_children[0]
            rep.copy_pieces(_rep_pieces(type_pieces(ctx, inner)))
            rep.lit("[0], " if spreads else "[] {")
        elif elem is not None:
            rep.copy_pieces(_rep_pieces(type_pieces(ctx, elem))).lit("[0], " if spreads else "[] {")
        else:
            rep.copy_pieces(_rep_pieces(type_pieces(ctx, t))).lit("(), " if spreads else " {")
        if spreads and not [c for c in n.named_children]:
            pass
        ctx.edit(s, s + 1, rep, C.COLLECTION_EXPRESSION)
        ctx.edit(e - 1, e, ")" if spreads else "}", C.COLLECTION_EXPRESSION)
        for sp in spreads:
            ctx.blank(*ctx.span(sp.children[0]), C.COLLECTION_EXPRESSION)


_ARRAY_LIKE = frozenset({"IEnumerable", "IReadOnlyList", "IReadOnlyCollection", "IList", "ICollection", "Span",
                         "ReadOnlySpan", "Memory", "ReadOnlyMemory"})


def _element_type(ctx: Ctx, t):
    g = t
    if g.type == "qualified_name":
        g = g.child_by_field_name("name") or g
    if g.type != "generic_name":
        return None
    ident = g.named_children[0]
    args = child_of_type(g, "type_argument_list")
    if ctx.src(ident) not in _ARRAY_LIKE or args is None or len(args.named_children) != 1:
        return None
    return args.named_children[0]


def _with_expressions(ctx: Ctx, caps) -> None:
    for n in caps.get("with_expression", []):
        kw = child_of_type(n, "with")
        init = child_of_type(n, "with_initializer_expression", "initializer_expression")
        subject = n.named_children[0] if n.named_children else None
        if kw is None or subject is None:
            ctx.unsupported_at(ctx.span(n)[0], C.WITH_EXPRESSION)
            continue
        ctx.new_group()
        ctx.helpers.add(HELPER_FILE)
        v = ctx.fresh("w")
        s, e = ctx.span(n)
        ctx.insert(s, HELPER + ".With(", C.WITH_EXPRESSION, -1, (s, e))
        ks, ke = ctx.span(kw)
        braces = [c for c in n.children if c.type in ("{", "}")]
        if init is not None:
            braces = [c for c in init.children if c.type in ("{", "}")]
        inits = [c for c in (init.named_children if init is not None else n.named_children[1:])
                 if c.type not in ("comment",)]
        if len(braces) != 2:
            ctx.unsupported_at(s, C.WITH_EXPRESSION)
            ctx.edits = [x for x in ctx.edits if x[6] != ctx.group]
            continue
        ob, cb = ctx.span(braces[0]), ctx.span(braces[1])
        ctx.edit(ks, ke, ",", C.WITH_EXPRESSION)
        ctx.edit(ob[0], ob[1], f"{v} => {{", C.WITH_EXPRESSION)
        for a in inits:
            ctx.insert(ctx.span(a)[0], f"{v}.", C.WITH_EXPRESSION)
        for c in (init.children if init is not None else n.children):
            if c.type == ",":
                ctx.edit(*ctx.span(c), ";", C.WITH_EXPRESSION)
        ctx.edit(cb[0], cb[1], "; })" if inits and not _trailing_comma(init or n) else " })", C.WITH_EXPRESSION)


def _trailing_comma(node) -> bool:
    kids = [c for c in node.children if c.type != "comment"]
    return len(kids) >= 2 and kids[-2].type == ","


_SPECIAL_CONSTRAINTS = frozenset({"Enum", "Delegate", "MulticastDelegate"})


def _constraints(ctx: Ctx, caps) -> None:
    """C# 7.3 constraints mcs rejects at declaration level (CS0702): ``Enum``/``Delegate``/``MulticastDelegate``
    are dropped (the whole clause when nothing is left), ``unmanaged`` becomes ``struct``, ``notnull`` and
    ``default`` go."""
    for clause in caps.get("type_parameter_constraints_clause", []):
        cons = children_of_type(clause, "type_parameter_constraint")
        drop = []
        for c in cons:
            word = re.sub(r"\s+", "", ctx.src(c))
            simple = word.rsplit(".", 1)[-1]
            if simple in _SPECIAL_CONSTRAINTS and (word == simple or word.startswith(("System.", "global::System."))):
                drop.append(c)
            elif word in ("notnull", "default"):
                drop.append(c)
            elif word == "unmanaged":
                ctx.new_group()
                ctx.edit(*ctx.span(c), "struct   ", C.CONSTRAINT)
        if not drop:
            continue
        ctx.new_group()
        if len(drop) == len(cons):
            ctx.blank(*ctx.span(clause), C.CONSTRAINT)
            continue
        kids = clause.children
        for c in drop:
            i = kids.index(c) if c in kids else -1
            s0, e0 = ctx.span(c)
            # the constraint with the comma before it (or after it, for the first)
            if i > 0 and kids[i - 1].type == ",":
                s0 = ctx.span(kids[i - 1])[0]
            elif i + 1 < len(kids) and kids[i + 1].type == ",":
                e0 = ctx.span(kids[i + 1])[1]
            ctx.blank(s0, e0, C.CONSTRAINT)


def _function_pointers(ctx: Ctx, caps) -> None:
    """``delegate* unmanaged[Cdecl]<A, R>`` -> ``System.IntPtr`` (a call through it then fails alike in both
    compiles; the declarations around it stay whole)."""
    for f in caps.get("function_pointer_type", []):
        if ancestor(f, "function_pointer_type") is not None:
            continue
        ctx.new_group()
        s, e = ctx.span(f)
        ctx.replace_padded(s, e, "global::System.IntPtr", C.FUNCTION_POINTER)


def _type_parameter_pointers(ctx: Ctx, caps) -> None:
    """``T*`` for a type parameter ``T`` (legal with ``unmanaged``) -> ``byte*``: mcs rejects any pointer to a
    type parameter (CS0208) at declaration level."""
    for ptr in caps.get("pointer_type", []):
        t = ptr.child_by_field_name("type") or (ptr.named_children[0] if ptr.named_children else None)
        if t is None or t.type != "identifier":
            continue
        name = ctx.src(t)
        n = ptr.parent
        found = False
        while n is not None and not found:
            tps = n.child_by_field_name("type_parameters") or child_of_type(n, "type_parameter_list")
            if tps is not None and n.type.endswith(("declaration", "statement")):
                found = any(ctx.src(tp.child_by_field_name("name") or tp) == name
                            for tp in tps.named_children if tp.type == "type_parameter")
            n = n.parent
        if found:
            ctx.new_group()
            ctx.replace_padded(*ctx.span(t), "byte", C.CONSTRAINT)  # byte*: pointer arithmetic still compiles


def _newer_syntax(ctx: Ctx, caps) -> None:
    """``nint``/``nuint`` -> IntPtr/UIntPtr (mcs reports CS0246 for them, at declaration level); ``>>>`` -> ``>>``;
    ``await foreach`` / ``await using (...)`` -> without ``await``; a generic attribute (CS0404) and a lambda's
    attributes or return type are blanked (reported in ``lossy``)."""
    for n in caps.get("native_int", []):
        ctx.new_group()
        ctx.edit(*ctx.span(n), "global::System." + ("UIntPtr" if ctx.src(n) == "nuint" else "IntPtr"),
                 C.NATIVE_INT)
    for n in caps.get("unsigned_shift", []):
        op = n.child_by_field_name("operator")
        if op is not None:
            ctx.new_group()
            ctx.replace_padded(*ctx.span(op), ctx.src(op).replace(">>>", ">>"), C.OTHER)
    for n in caps.get("await_statement", []):
        aw = child_of_type(n, "await")
        if aw is not None:
            ctx.new_group()
            ctx.blank(*ctx.span(aw), C.OTHER)
    for a in caps.get("generic_attribute", []):
        lst = a.parent
        if lst is not None and lst.type == "attribute_list":
            ctx.new_group()
            ctx.blank(*ctx.span(lst), C.OTHER)
            ctx.lossy_at(ctx.span(lst)[0], C.OTHER)
    for cls in caps.get("generic_class", []):
        bl = child_of_type(cls, "base_list")
        bases = [c for c in bl.named_children if c.type not in ("comment", "argument_list")] if bl else []
        if bases and re.sub(r"\s+", "", ctx.src(bases[0])) in ("Attribute", "System.Attribute",
                                                              "global::System.Attribute"):
            # a generic attribute class (C# 11): CS0698 at declaration level; it stays a class, not an attribute
            ctx.new_group()
            if len(bases) == 1:
                ctx.blank(*ctx.span(bl), C.OTHER)
            else:
                ctx.blank(ctx.span(bases[0])[0], ctx.span(bases[1])[0], C.OTHER)
            for lst in children_of_type(cls, "attribute_list"):  # [AttributeUsage]: CS0641 on a non-attribute
                ctx.blank(*ctx.span(lst), C.OTHER)
    for lam in caps.get("lambda_attributes", []):
        for lst in children_of_type(lam, "attribute_list"):
            ctx.new_group()
            ctx.blank(*ctx.span(lst), C.STATIC_LAMBDA)
    for lam in caps.get("lambda_return_type", []):
        t = lam.child_by_field_name("type")
        if t is not None:
            ctx.new_group()
            ctx.blank(*ctx.span(t), C.STATIC_LAMBDA)


def _top_level(ctx: Ctx, caps) -> None:
    stmts = caps.get("global_statement", [])
    if stmts:
        ctx.unsupported_at(ctx.span(stmts[0])[0], C.TOP_LEVEL_STATEMENTS)
