"""C# 7 that mcs 6.8 itself cannot read: ``ref`` before a generic return type (its parser's generic lookahead
fails), a ``ref this`` extension receiver (C# 7.2), a tuple type two generics deep or in a cast's type, ``async``
methods returning a task-like type other than ``Task`` (``ValueTask``, ``UniTask``: CS1983 at the declaration,
which stops mcs before every body), and tuples of more than 7 elements (mcs crashes:
``NotImplementedException: tuples > 7``, which would cost a compile of the whole tree to learn)."""

from __future__ import annotations

from benchsmith.analyzers.csharp.downlevel.core import Ctx, Rep, child_of_type
from benchsmith.analyzers.csharp.downlevel.edits import HELPER, HELPER_FILE, Construct as C

MAX_TUPLE = 7
_MEMBERS = frozenset({"method_declaration", "property_declaration", "indexer_declaration", "delegate_declaration",
                      "local_function_statement"})
_FUNCTIONS = frozenset({"method_declaration", "property_declaration", "indexer_declaration",
                        "local_function_statement", "lambda_expression", "anonymous_method_expression"})
_TYPE_NODES = frozenset({"type_argument_list", "tuple_type", "tuple_element", "generic_name", "qualified_name",
                         "nullable_type", "array_type", "ref_type", "pointer_type", "alias_qualified_name"})


def long_tuples(ctx: Ctx, caps) -> None:
    for n in caps.get("tuple_type", []):
        if sum(1 for c in n.named_children if c.type == "tuple_element") > MAX_TUPLE:
            ctx.unsupported_at(ctx.span(n)[0], C.LONG_TUPLE)
    for n in caps.get("tuple_expression", []):
        if sum(1 for c in n.named_children if c.type == "argument") > MAX_TUPLE:
            ctx.unsupported_at(ctx.span(n)[0], C.LONG_TUPLE)


def ref_returns(ctx: Ctx, caps) -> None:
    """``ref N<T> M() => ref f;`` -> ``N<T> M() => f;`` (``ref`` blanked, positions kept): the member keeps its
    name and type, and loses only being a reference (a ``ref`` use of it fails in both trees alike)."""
    for r in caps.get("ref_type", []):
        member = r.parent
        inner = r.named_children[-1] if r.named_children else None
        if member is None or member.type not in _MEMBERS or inner is None or "<" not in ctx.src(inner):
            continue
        ctx.new_group()
        for kw in r.children:
            if kw.type in ("ref", "readonly"):
                ctx.blank(*ctx.span(kw), C.REF_RETURN)
        stack = [c for c in member.children if c is not r]
        while stack:
            n = stack.pop()
            if n.type in _FUNCTIONS:
                continue  # a nested function returns for itself
            if n.type == "ref_expression" and n.parent is not None and \
                    n.parent.type in ("return_statement", "arrow_expression_clause"):
                kw = child_of_type(n, "ref")
                if kw is not None:
                    ctx.blank(*ctx.span(kw), C.REF_RETURN)
            stack.extend(n.children)
        ctx.lossy_at(ctx.span(r)[0], C.REF_RETURN)


def ref_receivers(ctx: Ctx, caps) -> None:
    """``GetSpan(ref this SnapshotSpan s)`` -> ``GetSpan(    this SnapshotSpan s)`` (``ref`` blanked, positions
    kept): mcs 6.8 rejects ``this`` beside ``ref`` (CS1101, a parse error that loses the file); the method keeps its
    name and signature types, and calls read the same, the receiver only passed by value."""
    for param in caps.get("ref_receiver", []):
        mods = [m for m in param.children if m.type == "modifier"]
        if "this" not in {ctx.src(m) for m in mods}:
            continue
        for m in mods:
            if ctx.src(m) == "ref":
                ctx.new_group()
                ctx.blank(*ctx.span(m), C.REF_RECEIVER)
                ctx.lossy_at(ctx.span(m)[0], C.REF_RECEIVER)


def nested_tuple_types(ctx: Ctx, caps) -> None:
    """``List<KeyValuePair<K, (string a, int b)>>`` -> ``List<KeyValuePair<K, global::System.ValueTuple<string,
    int>>>``: the same type; element names are blanked (a use of one fails in both trees alike)."""
    for n in caps.get("tuple_type", []):
        if not _mcs_misreads(n):
            continue
        ctx.new_group()
        open_, close = n.children[0], n.children[-1]
        if open_.type != "(" or close.type != ")":
            continue
        ctx.edit(*ctx.span(open_), "global::System.ValueTuple<", C.NESTED_TUPLE_TYPE)
        named = False
        for el in n.named_children:
            name = el.child_by_field_name("name") if el.type == "tuple_element" else None
            if name is not None:
                ctx.blank(*ctx.span(name), C.NESTED_TUPLE_TYPE)
                named = True
        ctx.edit(*ctx.span(close), ">", C.NESTED_TUPLE_TYPE)
        if named:
            ctx.lossy_at(ctx.span(n)[0], C.NESTED_TUPLE_TYPE)


_TASKS = frozenset({"void", "Task", "System.Threading.Tasks.Task", "global::System.Threading.Tasks.Task"})


def task_like_async(ctx: Ctx, caps) -> None:
    """``async UniTask<T> M()`` -> ``UniTask<T> M()`` (``async`` blanked): the declaration keeps its name and type;
    its body's ``await``s and returns then fail in both trees alike."""
    for mod in caps.get("async_modifier", []):
        decl = mod.parent
        if decl is None or decl.type not in ("method_declaration", "local_function_statement"):
            continue
        ret = decl.child_by_field_name("returns") or decl.child_by_field_name("type")
        if ret is None:
            continue
        name = ctx.src(ret).split("<", 1)[0].strip()
        if name in _TASKS:
            continue
        ctx.new_group()
        ctx.blank(*ctx.span(mod), C.TASK_LIKE_ASYNC)
        # mcs rejects ``await`` outside an async function while parsing: each of the body's own becomes a
        # helper call, whose argument is still checked (its result is ``dynamic``)
        stack = [c for c in decl.children if c.type in ("block", "arrow_expression_clause")]
        while stack:
            n = stack.pop()
            if n.type in _FUNCTIONS:
                continue
            if n.type == "await_expression" and n.children and n.children[0].type == "await":
                kw = n.children[0]
                ctx.edit(ctx.span(kw)[0], ctx.span(n.children[1])[0] if len(n.children) > 1 else ctx.span(kw)[1],
                         f"{HELPER}.Any(", C.TASK_LIKE_ASYNC, span=ctx.span(n))
                ctx.insert(ctx.span(n)[1], ")", C.TASK_LIKE_ASYNC, span=ctx.span(n))
                ctx.helpers.add(HELPER_FILE)
            elif n.type in ("foreach_statement", "using_statement", "local_declaration_statement") and \
                    child_of_type(n, "await") is not None:
                ctx.unsupported_at(ctx.span(n)[0], C.TASK_LIKE_ASYNC)
            stack.extend(n.children)
        ctx.lossy_at(ctx.span(mod)[0], C.TASK_LIKE_ASYNC)


def _mcs_misreads(n) -> bool:
    """A tuple type under two levels of type arguments or tuples, in type arguments of a cast's type, or in type
    arguments with a generic element type."""
    if n.parent is not None and n.parent.type == "type_argument_list" and any(
            "<" in (el.child_by_field_name("type") or el).text.decode("utf-8", "replace")
            for el in n.named_children):
        return True
    depth, p = 0, n.parent
    while p is not None and p.type in _TYPE_NODES:
        if p.type in ("type_argument_list", "tuple_type"):
            depth += 1
        last = p
        p = p.parent
    if depth >= 2:
        return True
    return depth == 1 and p is not None and p.type == "cast_expression" and \
        p.child_by_field_name("type") is last


def _tuple_declarations(tuple_node, path: tuple[int, ...] = ()) -> list | None:
    """``(var a, int b, (var c, _))``: each declaration of a tuple of declarations (nested or not, ``_`` discards
    left out) as (its ItemN path, the declaration_expression); None for anything else (an assignment to existing
    variables, a deconstruction into members)."""
    out: list = []
    args = tuple_node.named_children
    if not args or any(a.type != "argument" or len(a.named_children) != 1 for a in args):
        return None
    for i, a in enumerate(args, 1):
        inner = a.named_children[0]
        if inner.type == "declaration_expression" and inner.child_by_field_name("type") is not None \
                and inner.child_by_field_name("name") is not None:
            out.append(((*path, i), inner))
        elif inner.type == "identifier" and inner.text == b"_":
            continue
        elif inner.type == "tuple_expression":
            sub = _tuple_declarations(inner, (*path, i))
            if sub is None:
                return None
            out.extend(sub)
        else:
            return None
    return out


def foreach_deconstruction(ctx: Ctx, caps) -> None:
    """``foreach (var (a, b) in xs) body`` -> ``foreach (var __feN in xs) { var (a, b) = __feN; body }``: the
    deconstruction as a declaration, which mcs reads (the names keep their map into the original).
    ``foreach ((var a, int b) in xs)``, which mcs cannot parse, and whose declaration form it cannot resolve
    (CS0584) -> ``... { var a = __feN.Item1; int b = __feN.Item2; body }``: each variable gets the tuple
    element's type, so that a use of a member through it reaches the type as in the original."""
    for n in caps.get("foreach_deconstruction", []):
        left, body = n.child_by_field_name("left"), n.child_by_field_name("body")
        kind = n.child_by_field_name("type")
        if left is None or body is None or child_of_type(n, "await") is not None:
            continue
        ls, le = ctx.span(left)
        opener = "" if body.type == "block" else "{"  # a single statement gets braces around it
        if left.type == "tuple_pattern" and kind is not None and kind.type == "implicit_type":
            name = ctx.fresh("fe")
            decl = Rep(ctx).lit(opener + " var ").copy(ls, le).lit(f" = {name};")
            ctx.new_group()
            ctx.edit(ls, le, name, C.FOREACH_DECONSTRUCTION)
        elif left.type == "tuple_expression" and kind is None:
            decls = _tuple_declarations(left)
            if not decls:
                continue
            name = ctx.fresh("fe")
            decl = Rep(ctx).lit(opener)
            for path, d in decls:
                decl.lit(" ").copy_edited(*ctx.span(d.child_by_field_name("type"))).lit(" ")
                decl.copy(*ctx.span(d.child_by_field_name("name")))
                decl.lit(f" = {name}" + "".join(f".Item{i}" for i in path) + ";")
            ctx.new_group()
            ctx.edit(ls, le, f"var {name}", C.FOREACH_DECONSTRUCTION)
        else:
            continue
        bs, be = ctx.span(body)
        if body.type == "block":
            ctx.edit(bs + 1, bs + 1, decl, C.FOREACH_DECONSTRUCTION)
        else:
            ctx.edit(bs, bs, decl.lit(" "), C.FOREACH_DECONSTRUCTION, prio=-1, span=(bs, be))
            ctx.insert(be, " }", C.FOREACH_DECONSTRUCTION, span=(bs, be))
