"""The text of the shim's placeholder declarations: namespaces, and types nested to any depth.

A placeholder is keyed by its container (a dotted path: a namespace, or a type -- ``Port`` for ``Port.Capacity``),
its name and its arity.  A container that is (or lies inside) a placeholder type makes the entry a nested type of
it: mcs stops before every method body at ``Port.Capacity`` in a signature (CS0426) when ``Port`` has no member
``Capacity``, and a namespace ``Port`` beside a type ``Port`` would be CS0101, which stops it as well."""

from __future__ import annotations

import enum

PlaceholderKey = tuple[str, str, int]  # (container: namespace or type path, name, arity)


class PlaceholderKind(str, enum.Enum):
    CLASS = "class"
    INTERFACE = "interface"
    ATTRIBUTE = "attribute"


def _join(container: str, name: str) -> str:
    return f"{container}.{name}" if container else name


def _type_prefix(path: str, types: set[str]) -> str | None:
    """The outermost placeholder type that ``path`` is, or lies inside; None for a plain namespace path."""
    parts = path.split(".") if path else []
    for i in range(1, len(parts) + 1):
        if ".".join(parts[:i]) in types:
            return ".".join(parts[:i])
    return None


def render(namespaces: set[str], types: dict[PlaceholderKey, PlaceholderKind]) -> list[str]:
    """The declaration lines, sorted (the shim is part of both trees and must be byte-identical run to run)."""
    entries = dict(types)
    full = {_join(c, n) for c, n, _ in entries}
    # A container inside a placeholder type that is no entry itself (``Outer.Mid`` of ``Outer.Mid.Leaf``, where
    # only ``Outer`` and ``Leaf`` were asked for) becomes an empty class, so that the path resolves.
    for container, _, _ in list(entries):
        path = container
        while path and path not in full and _type_prefix(path, full) is not None:
            parent, _, name = path.rpartition(".")
            entries.setdefault((parent, name, 0), PlaceholderKind.CLASS)
            full.add(path)
            path = parent
    children: dict[str, list[tuple[PlaceholderKey, PlaceholderKind]]] = {}
    tops: list[tuple[PlaceholderKey, PlaceholderKind]] = []
    for key, kind in sorted(entries.items()):
        if _type_prefix(key[0], full) is None:
            tops.append((key, kind))
        else:
            children.setdefault(key[0], []).append((key, kind))

    def decl(key: PlaceholderKey, kind: PlaceholderKind) -> str:
        container, name, arity = key
        tp = "<" + ",".join(f"BsT{i}" for i in range(arity)) + ">" if arity else ""
        if kind == PlaceholderKind.INTERFACE:
            # C# 7 has no nested types in interfaces: what is asked inside one stays missing
            return f"public interface {name}{tp} {{ }}"
        # every arity of a name holds its nested types (``Outer<int>.Inner`` is printed ``Outer<int>``)
        inner = [decl(k, c) for k, c in children.get(_join(container, name), ())]
        if kind == PlaceholderKind.ATTRIBUTE:
            # any positional arguments: ``[DllExport("name", CallingConvention.Cdecl)]`` is no declaration error
            inner.insert(0, f"public {name}(params object[] args) {{ }}")
            head = f"public class {name}{tp} : System.Attribute"
        else:
            head = f"public class {name}{tp}"
        return f"{head} {{ {' '.join(inner)} }}" if inner else f"{head} {{ }}"

    lines = [f"namespace {ns} {{ }}" for ns in sorted(namespaces) if _type_prefix(ns, full) is None]
    for key, kind in tops:
        lines.append(f"namespace {key[0]} {{ {decl(key, kind)} }}" if key[0] else decl(key, kind))
    return lines


def type_names(types: dict[PlaceholderKey, PlaceholderKind]) -> set[str]:
    """The full names of the placeholder types (``Ns.Outer``, ``Ns.Outer.Inner``)."""
    return {_join(c, n) for c, n, _ in types}
