"""Attribution: a diagnostic new in the stubbed run -> the cross-file reference it marks.

The cursor sits right before the name that became unresolved: member codes (TS2339/TS2551/TS2694/TS2353/TS2561)
put it before the member, whose owner the message quotes (a stub, ``typeof`` a stub, or a class of the file
extending one; the object before the ``.`` first, never the member's own quote, so ``geo.dist`` is geo's even
beside ``import {dist}``); name codes (TS2348 not callable, TS2315 not generic, ...) before the stubbed name itself;
arity codes (TS2554/TS2558 ...) before the callee.  The defining file follows re-exports (``export *``,
``export {a as b} from``) and, for members, the ``extends`` chain across files.  TS2304/TS2305 cannot come from
these stubs (every local name stays bound; imports are removed, not rewritten).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from benchsmith.analyzers.typescript.model import Binding, FileInfo, Plan, StubbedFile
from benchsmith.analyzers.typescript.scan import IDENT_RE, node_text
from benchsmith.analyzers.typescript.tsc_output import CALL_CODES, MEMBER_CODES, NAME_CODES
from benchsmith.records import CrossFileRef

QUOTED_RE = re.compile(r"'([^'\n]*)'")


def defining_file(plan: Plan, target: str, name: str | None) -> str:
    """The project file that declares ``name`` as exported by ``target``, following re-exports."""
    return export_origin(plan, target, name)[0]


def export_origin(plan: Plan, target: str, name: str | None, depth: int = 0) -> tuple[str, str | None]:
    """(file, name there) of the declaration ``target`` exports as ``name``."""
    info = plan.files.get(target)
    if info is None or name is None or name == "*" or depth > 6:
        return target, name
    if name in info.declared and name not in info.local_exports:
        return target, name
    for spec, imported, exported in info.reexports:
        if exported == name:
            nxt = plan.resolver.resolve(spec, target)
            if nxt:
                return export_origin(plan, nxt, None if imported == "*" else imported, depth + 1)
    local = info.local_exports.get(name, name)
    if local in info.declared:
        return target, local
    for site in info.sites:
        for b in site.bindings:
            if b.local == local and site.target:
                return export_origin(plan, site.target, b.imported, depth + 1)
    for spec in info.star_exports:
        nxt = plan.resolver.resolve(spec, target)
        if nxt:
            found, there = export_origin(plan, nxt, name, depth + 1)
            if there is not None and there in plan.files[found].declared:
                return found, there
    return target, name


def member_file(plan: Plan, file: str, cls: str | None, member: str) -> str | None:
    """The file declaring ``member`` of class/interface ``cls`` of ``file``, walking ``extends`` across files
    (``subject.subscribe`` on an AsyncSubject is declared in Observable.ts); None when not found."""
    found = member_owner(plan, file, cls, member)
    return found[0] if found is not None else None


def member_owner(plan: Plan, file: str, cls: str | None, member: str,
                 depth: int = 0) -> tuple[str, str] | None:
    """(file, class) declaring ``member`` of ``cls`` of ``file``, up the ``extends`` chain; None when not found."""
    info = plan.files.get(file)
    if info is None or cls is None or depth > 8:
        return None
    if member in info.members.get(cls, ()):
        return file, cls
    for base, via in info.heritage.get(cls, []):
        if via is None and base in info.members:
            found = member_owner(plan, file, base, member, depth + 1)
            if found:
                return found
            continue
        binding = next((b for site in info.sites for b in site.bindings if b.local == base), None)
        if binding is None or binding.site.target is None:
            continue
        export = via if via is not None else binding.imported
        if export is None:
            continue
        origin, name = export_origin(plan, binding.site.target, export)
        found = member_owner(plan, origin, name, member, depth + 1)
        if found:
            return found
    return None


def owner(quoted: list[str], stub: StubbedFile, info: FileInfo, member: str,
          obj: str | None = None) -> tuple[Binding, str | None] | None:
    """The stub a member diagnostic is about: a quoted type is a stub (``'A'``, ``'typeof A'``,
    ``'Readonly<A>'``) or a class of this file extending one, directly or through other classes of the file.
    Returns the binding and, for ``extends ns.Base``, the member of the stub that is the base.

    ``member`` is the name the diagnostic is about: its own mention in the message is not an owner (with
    ``import {dist}`` and ``import * as geo``, "Property 'dist' does not exist on type 'typeof geo'" is about
    geo).  ``obj`` is the identifier before the ``.`` at the diagnostic (``geo`` of ``geo.dist``), when
    there is one: it is the owner when the message names it and it is a stub."""
    rest = list(quoted)
    if member in rest:
        rest.remove(member)
    names = [type_name(q) for q in rest]
    if obj is not None and obj in stub.locals and obj in names:
        return stub.locals[obj], None
    for name in names:
        if name in stub.locals:
            return stub.locals[name], None
    for name in names:
        seen = {name}
        frontier = [name]
        for _ in range(6):
            nxt: list[str] = []
            for cls in frontier:
                for base, member in info.heritage.get(cls, []):
                    if base in stub.locals:
                        return stub.locals[base], member
                    if member is None and base not in seen:
                        seen.add(base)
                        nxt.append(base)
            frontier = nxt
    return None


def reference(plan: Plan, tree_of: Callable[[], Any], path: str, offset: int, code: str,
              message: str) -> CrossFileRef | None:
    """A new diagnostic at ``offset`` of the original text -> a reference, or None.  ``tree_of`` gives the file's
    tree-sitter tree (parsed only when a code needs it)."""
    info, stub = plan.files[path], plan.stubbed[path]
    text = info.text
    if code in CALL_CODES:
        callee = callee_at(tree_of(), info, offset)
        if callee is None:
            return None
        offset = callee
    m = IDENT_RE.match(text, offset)
    if m is None:
        return None
    ident = m.group(0)
    quoted = QUOTED_RE.findall(message)
    if code in MEMBER_CODES:
        if ident not in quoted:
            return None
        found = owner(quoted, stub, info, ident, object_at(tree_of(), info, offset))
        if found is None:
            return None
        binding, via = found
        # The file declaring the member: for `A.m` / `a.m` the file declaring A; for `ns.Foo` the module's
        # export Foo; for `this.m` in `class C extends ns.Base` the export Base.
        export = via if via is not None else (binding.imported if binding.imported is not None else ident)
    elif code in NAME_CODES or code in CALL_CODES:
        if ident not in stub.locals:
            return None
        binding = stub.locals[ident]
        export = binding.imported
    else:
        return None
    site = binding.site
    if site.unresolved_by_tsc or site.target is None:
        return None
    line, col = info.positions.line_col(offset)
    origin, there = export_origin(plan, site.target, export)
    defining = origin
    if code in MEMBER_CODES and there is not None and there != ident:
        # a member of an imported class: the file that declares it, up the class's `extends` chain
        defining = member_file(plan, origin, there, ident) or origin
    return CrossFileRef(path, line, col, ident, binding.local, defining, code, message)


def callee_at(tree, info: FileInfo, offset: int) -> int | None:
    """For an arity error at ``offset`` (an argument, or the call itself), the char offset of the callee's name:
    ``f(x)`` -> f, ``new A(x)`` -> A, ``ns.f(x)`` -> f."""
    pos = info.positions
    b = pos.to_byte(offset)
    node = tree.root_node.descendant_for_byte_range(b, b)
    while node is not None and node.type not in ("call_expression", "new_expression"):
        node = node.parent
    if node is None:
        return None
    callee = node.child_by_field_name("function") or node.child_by_field_name("constructor")
    if callee is None:
        return None
    if callee.type == "member_expression":
        callee = callee.child_by_field_name("property")
    if callee is None or callee.type not in ("identifier", "property_identifier", "type_identifier"):
        return None
    return pos.to_char(callee.start_byte)


# member access node -> (field of the object, field of the member); the same in the TypeScript/TSX/JavaScript grammars
_ACCESS_FIELDS = {
    "member_expression": ("object", "property"),  # geo.dist, typeof geo.X, <geo.Comp/> (TSX/JSX)
    "nested_identifier": ("object", "property"),  # geo.a in geo.a.B
    "nested_type_identifier": ("module", "name"),  # geo.Point in a type position
}


def object_at(tree, info: FileInfo, offset: int) -> str | None:
    """The plain identifier that is the object of the member access whose member name starts at ``offset``."""
    b = info.positions.to_byte(offset)
    node = tree.root_node.descendant_for_byte_range(b, b)
    if node is None or node.start_byte != b:
        return None
    parent = node.parent
    fields = _ACCESS_FIELDS.get(parent.type) if parent is not None else None
    if fields is None:
        return None
    member = parent.child_by_field_name(fields[1])
    obj = parent.child_by_field_name(fields[0])
    if member is None or member.start_byte != node.start_byte or obj is None or obj.type != "identifier":
        return None
    return node_text(obj)


_WRAPPER_RE = re.compile(r"^(?:Readonly|Partial|Required|NonNullable)<(.*)>$")


def type_name(quoted: str) -> str:
    """``'typeof A'`` / ``'A<T>'`` / ``'Readonly<A<T>>'`` -> ``A``."""
    name = quoted.strip().removeprefix("typeof ").strip()
    for _ in range(4):
        m = _WRAPPER_RE.match(name)
        if not m:
            break
        name = m.group(1).strip()
    return re.sub(r"<.*>$", "", name)

