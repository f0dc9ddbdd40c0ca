"""Blocker prediction: the files whose stubs are sure to break a declaration (which stops mcs before every method
body of the stubbed tree), found on the syntax tree so their stubs are left out before the first compile."""

from __future__ import annotations

from benchsmith import treesitter
from benchsmith.analyzers.common import walk
from benchsmith.analyzers.csharp.scan import (BLOCKER_PATTERNS, BODY_NODES, GRAMMAR, MEMBER_DECLS, STUB_HOSTS,
                                              TYPE_DECLS, CsFileInfo, CsType, _ancestor_node)
from benchsmith.analyzers.csharp.stubs import CsStubs, stub_nested

OBJECT_VIRTUALS = frozenset({"ToString", "Equals", "GetHashCode"})  # overridable on any class, a stub's too
StubKey = tuple[str, str]  # (top-level type, stub name): the stub of that name nested in the types of that name
SIGNATURE_SKIP = frozenset({"block", "arrow_expression_clause", "accessor_list", "attribute_list"})


def _arity_of(ident) -> int:
    """Type arguments written after an identifier (``Foo<A, B>``: 2); a stub shadows only a name of its arity."""
    p = ident.parent
    if p is not None and p.type == "generic_name" and p.children and p.children[0] == ident:
        args = next((c for c in p.children if c.type == "type_argument_list"), None)
        return len(args.named_children) if args is not None else 0
    return 0


def _signature_names(member, info: CsFileInfo) -> set[tuple[str, int]]:
    """(identifier, arity) of a member's declaration (return type, parameters), not of its body or attributes; where
    the scan's tree keeps a type the text replaced (``info.masks``), the names of the text."""
    names: set[tuple[str, int]] = set()
    name = member.child_by_field_name("name")
    stack = [c for c in member.children if c.type not in SIGNATURE_SKIP and c != name]
    while stack:
        n = stack.pop()
        masked = info.masked(n)
        if masked is not None:
            names.update((m, 0) for m in masked)
            continue
        if n.type == "identifier":
            names.add((n.text.decode("utf-8", "replace"), _arity_of(n)))
        stack.extend(c for c in n.children if c.type not in SIGNATURE_SKIP)
    return names


def _generic_base(node) -> bool:
    """Whether a type declaration around ``node`` derives from a generic class (``: Visitor<TState, Value>``)."""
    p = node.parent
    while p is not None:
        if p.type in TYPE_DECLS:
            bases = next((c for c in p.children if c.type == "base_list"), None)
            first = next(iter(bases.named_children), None) if bases is not None else None
            if first is not None and first.type == "generic_name":
                return True
        p = p.parent
    return False


def _class_chain(node, types_by_name: dict[str, list[CsType]]) -> list[str]:
    """Names of the type declarations around ``node`` and of their project base classes, nearest first."""
    out: list[str] = []
    p = node.parent
    while p is not None:
        if p.type in TYPE_DECLS:
            n = p.child_by_field_name("name")
            if n is not None:
                out.append(n.text.decode("utf-8", "replace"))
            bases = next((c for c in p.children if c.type == "base_list"), None)
            first = next(iter(bases.named_children), None) if bases is not None else None
            base = _simple_type_name(first) if first is not None else None
            for cls in _inheritance(base, types_by_name) if base else ():
                if cls in out or len(out) >= 32:
                    break
                out.append(cls)
        p = p.parent
    return out


def _inheritance(cls: str, types_by_name: dict[str, list[CsType]]) -> list[str]:
    """``cls`` and its project base classes, nearest first."""
    out = [cls]
    cands = types_by_name.get(cls, [])
    base = next(iter(cands[0].supers[:1]), None) if cands else None
    while base and base not in out and len(out) < 32:
        out.append(base)
        cands = types_by_name.get(base, [])
        base = next(iter(cands[0].supers[:1]), None) if cands else None
    return out


def _simple_type_name(node) -> str | None:
    if node.type == "identifier":
        return node.text.decode("utf-8", "replace")
    if node.type == "generic_name":
        ident = next((c for c in node.children if c.type == "identifier"), None)
        return ident.text.decode("utf-8", "replace") if ident is not None else None
    return None


def _top_type(node):
    """The outermost type declaration around ``node`` (None outside any type)."""
    top = None
    p = node.parent
    while p is not None:
        if p.type in TYPE_DECLS:
            top = p
        p = p.parent
    return top


def _captures(info: CsFileInfo) -> dict:
    """The blocker captures of one file: the scan's, or a query of its own for an info scanned without them."""
    if info.blocker_caps:
        return info.blocker_caps
    from tree_sitter import QueryCursor

    return QueryCursor(treesitter.query(GRAMMAR, BLOCKER_PATTERNS)).captures(info.tree.root_node)


def predict_blockers(plans: dict[str, CsStubs], infos: dict[str, CsFileInfo], texts: dict[str, str]) -> set[StubKey]:
    """The stubs sure to break a declaration, which stops mcs before any method body of the whole stubbed tree, as
    (top-level type, stub name):
    - the stub of a class that a type nested in a stub host derives from and overrides a member of (CS0115: the
      empty stub has nothing to override);
    - the stub of an interface whose member a type nested in a stub host implements explicitly (CS0540);
    - for any stub host, a stub an ``override`` sees (nested in a type around it, or inherited) that its signature
      names and the overridden member's declaration does not see (the signatures differ: CS0115/CS0508/CS1715);
    - a stub an explicit implementation sees and names, in the interface's name or in the member's signature
      (CS0540/CS0539);
    - a stub a qualified name goes through outside the bodies, past the nested types it declares (CS0426);
    - a stub named in a generic method's constraints, in a type with a base list (the interface member it
      implements has other constraints: CS0425).
    Leaving just those stubs out up front keeps the file's other stubs and saves the stubbed recompile that would
    find them; the recompile stays as the fallback for whatever this misses (it takes out a whole file's
    stubs)."""
    out: set[StubKey] = set()
    # ("Top.Stub", arity) of the stubs some file's text carries -> the type each stands for
    hosts: dict[tuple[str, int], CsType] = {}
    for path, plan in sorted(plans.items()):
        if plan.insertions.points:
            for fqn, t in plan.carried.items():
                if fqn.count(".") >= 1:
                    hosts.setdefault((".".join(fqn.split(".")[-2:]), t.arity), t)
    types_by_name: dict[str, list[CsType]] = {}
    for info in infos.values():
        for t in info.declared:
            types_by_name.setdefault(t.name, []).append(t)
    stub_names = {n for plan in plans.values() for n in plan.stubs}
    members_of: dict[str, set[str]] = {}  # top-level type name -> its members' names, over all its parts
    for info in infos.values():
        for top in info.tops:
            members_of.setdefault(top.name, set()).update(top.members)
    for path in sorted(infos):
        text = texts.get(path)
        if text is None or infos[path].tree is None or not any(n in text for n in stub_names):
            continue
        caps = _captures(infos[path])
        for mod in caps.get("mod", ()):
            if mod.text != b"override":
                continue
            member = mod.parent
            sig = {(n, k) for n, k in _signature_names(member, infos[path]) if n in stub_names}
            if not sig:
                continue
            # The overridden member is declared in the first class up the chain that has a member of that name
            # (none: a framework class).  A stub nested in that class or one it derives from is seen by both
            # declarations alike; any other the override sees (nested in a class below it, in a type around the
            # override's class, in one of that type's bases) makes the override's signature differ from the base's.
            chain = _class_chain(member, types_by_name)
            mname = member.child_by_field_name("name")
            mname = mname.text.decode("utf-8", "replace") if mname is not None else ""
            declared_in = next((i for i, cls in enumerate(chain) if i > 0 and mname in members_of.get(cls, ())),
                               len(chain))
            alike: set[str] = set()
            if declared_in < len(chain):
                alike = set(_inheritance(chain[declared_in], types_by_name))
                if _generic_base(member):
                    # a generic base's member is declared with its type parameters, substituted from outside the
                    # derived class's body: a stub nested in that base differs from them too
                    alike.discard(chain[declared_in])
            for cls in chain:
                if cls in alike:
                    continue
                for n, k in sig:
                    if (f"{cls}.{n}", k) in hosts:
                        out.add((cls, n))
        for spec in caps.get("explicit", ()):
            # a stub the explicit implementation sees (nested in a type around it, or inherited from a base of
            # one) and names, in the interface's name (then no interface of the type's: CS0540) or in the
            # member's signature (then no member of the interface's, declared where the stub is not seen: CS0539)
            chain = _class_chain(spec, types_by_name)
            names = {(i.text.decode("utf-8", "replace"), _arity_of(i)) for i in walk(spec) if i.type == "identifier"}
            if spec.parent is not None and spec.parent.type in MEMBER_DECLS:
                names |= _signature_names(spec.parent, infos[path])
            for name, k in names:
                if name in stub_names:
                    for cls in chain:
                        if (f"{cls}.{name}", k) in hosts:
                            out.add((cls, name))
        for clause in caps.get("constraint", ()):
            # a generic method's constraints must be those of the interface member it implements, declared where
            # the stub is not seen: a stub named in them breaks the implementation (CS0425)
            owner = _ancestor_node(clause.parent, frozenset(TYPE_DECLS))
            if owner is None or not any(c.type == "base_list" for c in owner.children):
                continue
            for i in walk(clause):
                name = i.text.decode("utf-8", "replace") if i.type == "identifier" else None
                if name in stub_names:
                    for cls in _class_chain(clause.parent, types_by_name):
                        if (f"{cls}.{name}", _arity_of(i)) in hosts:
                            out.add((cls, name))
        for q in caps.get("qualifier", ()):
            name = q.text.decode("utf-8", "replace")
            if name not in stub_names or _ancestor_node(q, BODY_NODES) is not None:
                continue
            for cls in _class_chain(q, types_by_name):
                stub = hosts.get((f"{cls}.{name}", _arity_of(q)))
                if stub is not None and not _declares_path(stub, q):
                    out.add((cls, name))
    for path in sorted(plans):
        stubs, text = plans[path].stubs, texts[path]
        if not stubs or ("override" not in text and not any(
                t.kind == "interface" and f"{n}." in text for n, t in stubs.items())):
            continue  # neither an override nor a qualified name of a stubbed interface: nothing to look at
        caps = _captures(infos[path])
        for spec in caps.get("explicit", ()):
            name = next((n for n in (_simple_type_name(c) for c in spec.children) if n), None)
            top = _top_type(spec)
            if name in stubs and stubs[name].kind == "interface" and top is not None \
                    and TYPE_DECLS[top.type] in STUB_HOSTS:
                out.add((_node_name(top), name))
        for node in caps.get("type", ()):
            top = _top_type(node)
            if top is None or TYPE_DECLS[top.type] not in STUB_HOSTS:
                continue  # top-level: its base list is resolved outside its body, where the stubs are not seen
            bases = next((c for c in node.children if c.type == "base_list"), None)
            first = next((c for c in bases.named_children), None) if bases is not None else None
            base = _simple_type_name(first) if first is not None else None
            if base not in stubs or stubs[base].kind != "class":
                continue
            body = node.child_by_field_name("body")
            for member in body.named_children if body is not None else ():
                if member.type not in MEMBER_DECLS or not any(
                        c.type == "modifier" and c.text == b"override" for c in member.children):
                    continue
                mname = member.child_by_field_name("name")
                if member.type != "method_declaration" or mname is None or \
                        mname.text.decode("utf-8", "replace") not in OBJECT_VIRTUALS:
                    out.add((_node_name(top), base))
                    break
    return out


def _declares_path(stub: CsType, qualifier) -> bool:
    """Whether the qualified name that ``qualifier`` (a stub's name) starts names only types nested in the stub,
    which declares them (``Outer.Inner.Deep``); else the stub breaks it (CS0426)."""
    t, node = stub, qualifier.parent
    while node is not None and node.type == "qualified_name":
        name = node.child_by_field_name("name")
        ident = name if name is None or name.type == "identifier" else \
            next((c for c in name.children if c.type == "identifier"), None)
        if ident is None:
            return False
        text = ident.text.decode("utf-8", "replace")
        t = next((n for n in stub_nested(t) if n.name == text and n.arity == _arity_of(ident)), None)
        if t is None:
            return False
        node = node.parent
    return True


def _node_name(decl) -> str:
    n = decl.child_by_field_name("name")
    return n.text.decode("utf-8", "replace") if n is not None else ""
