"""What kind of cross-file use a reference is (``ReferenceKind``), read off the tree-sitter node of its name.

The same rules label the references the diagnostics reveal and those the binding scan (``uses``) finds, so one use
gets one kind whichever way it was found.  The name's place decides, most specific first: a decorator's callee
(ATTRIBUTE), a JSX tag (JSX), the constructor of a ``new`` (CONSTRUCTOR, ``new a.b.C()`` chains included), an
``extends``/``implements`` clause (HERITAGE), a type position, ``typeof`` or the right of ``instanceof`` (TYPE);
otherwise a member through ``this``/``super`` (INHERITED_MEMBER: the class extends one of another file), a member of
a namespace import or a name a module re-exports (MODULE_MEMBER), and any other member access or use (MEMBER).
"""

from __future__ import annotations

from benchsmith.records import ReferenceKind

SCAN_DIAGNOSTIC = "binding-scan"  # CrossFileRef.diagnostic of the references the binding scan makes (no tsc code)

# a node and the field of it that holds a dotted name's next part: climbing these keeps us on one dotted name
ACCESS_NODES = frozenset({"member_expression", "nested_identifier", "nested_type_identifier"})
_JSX_TAGS = frozenset({"jsx_opening_element", "jsx_self_closing_element", "jsx_closing_element"})
_HERITAGE = frozenset({"extends_clause", "implements_clause", "extends_type_clause", "class_heritage"})
# where a name is a type although tree-sitter spells it `identifier` (typeof X in a type, the module of ns.T)
_TYPE_NODES = frozenset({"type_query", "nested_type_identifier", "type_annotation", "type_arguments",
                         "generic_type", "type_predicate_annotation"})
# climbing stops at these: a type inside an arrow function's body is not the arrow's parameter type
_STOP = frozenset({"statement_block", "class_body", "program", "arguments", "object", "array"})


def same_node(a, b) -> bool:
    return a is not None and b is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte \
        and a.type == b.type


def dotted_top(node):
    """The whole dotted name ``node`` is a part of (``a.b.C`` for any of a, b, C), or ``node`` itself."""
    top = node
    while top.parent is not None and top.parent.type in ACCESS_NODES:
        top = top.parent
    return top


def classify(node, namespace_object: bool = False, reexported: bool = False) -> ReferenceKind:
    """The kind of the use whose name is the leaf ``node``.  ``namespace_object``: the object before the ``.`` is
    a namespace import (``import * as ns``); ``reexported``: the name reaches its declaration through a module
    that re-exports it."""
    top = dotted_top(node)
    parent = top.parent
    if parent is not None:
        if parent.type == "decorator" or (parent.type == "call_expression" and parent.parent is not None
                                          and parent.parent.type == "decorator"
                                          and same_node(parent.child_by_field_name("function"), top)):
            return ReferenceKind.ATTRIBUTE
        if parent.type in _JSX_TAGS and same_node(parent.child_by_field_name("name"), top):
            return ReferenceKind.JSX
        if parent.type == "new_expression" and same_node(parent.child_by_field_name("constructor"), top):
            return ReferenceKind.CONSTRUCTOR
        if parent.type == "binary_expression" and same_node(parent.child_by_field_name("right"), top) and \
                any(c.type == "instanceof" for c in parent.children):
            return ReferenceKind.TYPE
        if parent.type == "unary_expression" and any(c.type == "typeof" for c in parent.children):
            return ReferenceKind.TYPE
    if node.type == "type_identifier" or node.parent is not None and node.parent.type in _TYPE_NODES:
        return _heritage_or_type(top)
    a = top.parent
    while a is not None and a.type not in _STOP:
        if a.type in _TYPE_NODES:
            return _heritage_or_type(top)
        if a.type in _HERITAGE:
            return ReferenceKind.HERITAGE
        a = a.parent
    p = node.parent
    if p is not None and p.type == "member_expression" and same_node(p.child_by_field_name("property"), node):
        obj = p.child_by_field_name("object")
        if obj is not None and obj.type in ("this", "super"):
            return ReferenceKind.INHERITED_MEMBER
        if namespace_object:
            return ReferenceKind.MODULE_MEMBER
        return ReferenceKind.MEMBER
    return ReferenceKind.MODULE_MEMBER if reexported else ReferenceKind.MEMBER


def _heritage_or_type(top) -> ReferenceKind:
    """A type name in an ``extends``/``implements`` clause is the heritage itself, unless it is a type argument
    there (``extends Base<Props>``: Props is a type)."""
    a = top.parent
    while a is not None and a.type not in _STOP:
        if a.type in ("type_arguments", "type_annotation"):
            return ReferenceKind.TYPE
        if a.type in _HERITAGE:
            return ReferenceKind.HERITAGE
        a = a.parent
    return ReferenceKind.TYPE
