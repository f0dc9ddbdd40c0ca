"""Token-level rewrites: each replaces or blanks a few tokens in place (``!``, ``??=``, ``using var``, ``static``
lambdas, modifiers, ranges, raw and UTF-8 strings, constraints, function pointers, ``nint`` ...)."""

from __future__ import annotations

import re

from benchsmith.analyzers.csharp.downlevel.edits import Construct as C
from benchsmith.analyzers.csharp.downlevel.edits import HELPER, HELPER_FILE
from benchsmith.analyzers.csharp.downlevel.core import Ctx, ancestor, child_of_type, children_of_type


def null_forgiving(ctx: Ctx, caps) -> None:
    for n in caps.get("postfix_unary_expression", []):
        last = n.children[-1] if n.children else None
        if last is not None and last.type == "!":
            ctx.new_group()
            ctx.blank(*ctx.span(last), C.NULL_FORGIVING)


def using_declaration(ctx: Ctx, caps) -> None:
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


def static_modifiers(ctx: Ctx, caps) -> None:
    for n in caps.get("lambda_expression", []) + caps.get("anonymous_method_expression", []):
        for m in n.children:
            if m.type != "modifier":
                continue
            if ctx.src(m) == "static":
                ctx.new_group()
                ctx.blank(*ctx.span(m), C.STATIC_LAMBDA)


def misc_modifiers(ctx: Ctx, caps) -> None:
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


def ranges(ctx: Ctx, caps) -> None:
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
    for p in caps.get("prefix_unary_expression", []):
        if p.id in seen or not p.children or p.children[0].type != "^":
            continue
        # a[^1] -> a[ 1]: the element type is what name resolution needs
        ctx.new_group()
        ctx.blank(*ctx.span(p.children[0]), C.INDEX_FROM_END)


def coalescing_assignment(ctx: Ctx, caps) -> None:
    for a in caps.get("assignment_expression", []):
        op = a.child_by_field_name("operator")
        if op is not None and op.type == "??=":
            ctx.new_group()
            s, e = ctx.span(op)
            ctx.edit(s, e, "=  ", C.NULL_COALESCING_ASSIGNMENT)


def strings(ctx: Ctx, caps) -> None:
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


_SPECIAL_CONSTRAINTS = frozenset({"Enum", "Delegate", "MulticastDelegate"})


def constraints(ctx: Ctx, caps) -> None:
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


def function_pointers(ctx: Ctx, caps) -> None:
    """``delegate* unmanaged[Cdecl]<A, R>`` -> ``System.IntPtr`` (a call through it then fails alike in both
    compiles; the declarations around it stay whole)."""
    outer_end = -1
    for f in caps.get("function_pointer_type", []):  # in source order: an inner one starts inside the outer one
        if f.start_byte < outer_end:
            continue
        outer_end = f.end_byte
        ctx.new_group()
        s, e = ctx.span(f)
        ctx.replace_padded(s, e, "global::System.IntPtr", C.FUNCTION_POINTER)


def type_parameter_pointers(ctx: Ctx, caps) -> None:
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
            tps = None
            if n.type.endswith(("declaration", "statement")):
                tps = n.child_by_field_name("type_parameters") or child_of_type(n, "type_parameter_list")
            if tps is not None:
                found = any(ctx.src(tp.child_by_field_name("name") or tp) == name
                            for tp in tps.named_children if tp.type == "type_parameter")
            n = n.parent
        if found:
            ctx.new_group()
            ctx.replace_padded(*ctx.span(t), "byte", C.CONSTRAINT)  # byte*: pointer arithmetic still compiles


def newer_syntax(ctx: Ctx, caps) -> None:
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
