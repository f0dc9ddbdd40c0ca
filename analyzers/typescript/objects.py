"""Object-literal members of a project type: ``const ds: IDataSource = { async execUpdates(...) {...} }``,
``{ actions: ... } as ChatGPTMessage``.

Each key of an object literal whose type is written beside it (a variable's annotation, ``as T``, ``satisfies T``) is
the member of that type it implements: a reference at the key when the plan finds the member in T's declaration (up
its ``extends`` chain).  A stub is an empty class, so tsc flags at most the first such key (TS2353); the others are
only found here.  A nested literal's keys count when the member's declared type is one name the plan resolves.
"""

from __future__ import annotations

from benchsmith.analyzers.typescript.kinds import same_node
from benchsmith.analyzers.typescript.model import Plan
from benchsmith.analyzers.typescript.typed import member_ref, member_type
from benchsmith.records import CrossFileRef, ReferenceKind

_WRAPPERS = frozenset({"nested_type_identifier", "generic_type"})
_KEYED = {"pair": "key", "method_definition": "name"}


def typed_object(type_name_node):
    """The object literal whose written type is the type the name node starts, or None."""
    t = type_name_node
    while t.parent is not None and t.parent.type in _WRAPPERS:
        if t.parent.type == "generic_type" and not same_node(t.parent.child_by_field_name("name"), t):
            return None
        t = t.parent
    holder = t.parent
    if holder is None:
        return None
    if holder.type == "type_annotation":
        decl = holder.parent
        if decl is None or decl.type != "variable_declarator" or not same_node(decl.child_by_field_name("type"),
                                                                                holder):
            return None
        value = decl.child_by_field_name("value")
    elif holder.type in ("as_expression", "satisfies_expression"):
        value = holder.named_children[0] if holder.named_children else None
        while value is not None and value.type == "parenthesized_expression" and value.named_children:
            value = value.named_children[0]
    else:
        return None
    return value if value is not None and value.type == "object" else None


def object_member_refs(plan: Plan, path: str, obj, typ: tuple[str, str, str], depth: int = 3) -> list[CrossFileRef]:
    """References at the keys of ``obj`` that are members of the project type ``typ`` (``declared_type``), and of
    the literals nested in it whose key's declared type is a project type too."""
    out: list[CrossFileRef] = []
    for child in obj.named_children:
        if child.type == "shorthand_property_identifier":
            key = child
        elif child.type in _KEYED:
            key = child.child_by_field_name(_KEYED[child.type])
        else:
            continue
        if key is None or key.type not in ("property_identifier", "shorthand_property_identifier"):
            continue
        name = key.text.decode("utf-8", "replace")
        ref = member_ref(plan, path, typ, key, f"member {name!r} of {typ[1]} in an object literal",
                         ReferenceKind.MEMBER)
        if ref is None:
            continue
        out.append(ref)
        value = child.child_by_field_name("value") if child.type == "pair" else None
        if value is not None and value.type == "object" and depth > 1:
            inner = member_type(plan, typ[0], typ[1], name)
            if inner is not None:
                out += object_member_refs(plan, path, value, inner, depth - 1)
    return out
