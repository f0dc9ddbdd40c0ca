"""Stub planning: for each file, empty nested types standing in for the project types declared in other files that
it names (CrossCodeEval's dummy class), appended before the closing brace of each of its top-level classes and
structs, on the same line, so that no position before them moves."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterator

from benchsmith.analyzers.common import Insertions, apply_insertions
from benchsmith.analyzers.csharp.kinds import resolve, visible_project_types
from benchsmith.analyzers.csharp.scan import STUB_HOSTS, CsFileInfo, CsType


@dataclass
class CsStubs:
    path: str
    stubbed_text: str
    insertions: Insertions
    stubs: dict[str, CsType]  # simple name -> the project type it stands for (for every part of a partial type)
    stub_fqns: dict[str, str]  # name the compiler prints for a stub (Ns.Top.Stub, Top.Stub) -> simple name
    # the stubs written into this file's text (a partial type's host part carries those of every part, used here
    # or not): printed name -> the project type it stands for
    carried: dict[str, CsType] = field(default_factory=dict)


def _stub_decl(t: CsType, depth: int = 0) -> str:
    """An empty declaration of ``t`` of its kind, holding its nested types (empty too) where C# 7 allows them."""
    tp = "<" + ",".join(f"BsT{depth}_{i}" if depth else f"BsT{i}" for i in range(t.arity)) + ">" if t.arity else ""
    if t.kind == "interface":
        return f"public interface {t.name}{tp} {{}}"
    if t.kind == "enum":
        return f"public enum {t.name} {{}}"
    # a nested delegate stands as a class (a name to resolve in signatures); the conversions it breaks are in bodies
    keyword = "struct" if t.kind == "struct" else "class"
    inner = " ".join(_stub_decl(n, depth + 1) for n in stub_nested(t))
    return f"public {keyword} {t.name}{tp} {{{' ' + inner + ' ' if inner else ''}}}"


def stub_nested(t: CsType) -> tuple[CsType, ...]:
    """The nested types the stub of ``t`` declares: a class's or a struct's (C# 7 has none in an interface)."""
    return t.nested if t.kind not in ("interface", "enum") else ()


def merged_nested(parts: list[CsType]) -> tuple[CsType, ...]:
    """The nested types of all parts of a partial type (a nested partial type's parts merged too), by (name,
    arity), in declaration order."""
    groups: dict[tuple[str, int], list[CsType]] = {}
    for part in parts:
        for n in part.nested:
            groups.setdefault((n.name, n.arity), []).append(n)
    return tuple(replace(g[0], nested=merged_nested(g)) for g in groups.values())


def nested_names(t: CsType) -> Iterator[str]:
    """The dotted paths of the types nested in ``t`` (``Inner``, ``Inner.Deep``)."""
    for n in stub_nested(t):
        yield n.name
        for deeper in nested_names(n):
            yield f"{n.name}.{deeper}"


def stub_counts(compiled: set[str], plans: dict[str, CsStubs]) -> dict[str, int]:
    """The analysis's stats of a stub planning: files compiled, files with stubs, stubs."""
    return {"compiled_files": len(compiled), "files_with_stubs": len(plans),
            "stubs": sum(len(p.stubs) for p in plans.values())}


def plan_all_stubs(infos: dict[str, CsFileInfo], texts: dict[str, str], compiled: set[str],
                   left_out: frozenset[tuple[str, str]] = frozenset()) -> dict[str, CsStubs]:
    """Stubs for every compiled file; parts of a partial type get the union of their names, emitted once.
    ``left_out``: (top-level type, stub name) of stubs not to place (``blockers.predict_blockers``): the name
    keeps meaning the project's type there."""
    by_ns, visible = visible_project_types(infos, compiled, delegates=False)
    wanted: dict[str, dict[str, CsType]] = {}
    for path in sorted(compiled):
        info = infos[path]
        names = {n for ns in visible[path] for n in by_ns.get(ns, {})} & info.used
        chosen = {}
        for name in sorted(names):
            t = resolve(name, path, info, by_ns, visible[path])
            if t is not None:
                parts = by_ns[t.namespace][t.name]
                chosen[name] = replace(t, nested=merged_nested(parts)) if len(parts) > 1 else t
        if chosen:
            wanted[path] = chosen
    # Partial types: one host part (the first file) carries the union; every part's file may use it.
    groups: dict[tuple[str, str], list[str]] = {}
    for path in sorted(compiled):
        for top in infos[path].tops:
            if top.partial and top.kind in STUB_HOSTS:
                groups.setdefault((top.namespace, top.name), []).append(path)
    plans: dict[str, CsStubs] = {}
    inserts: dict[str, list[tuple[int, str]]] = {}
    names_for: dict[str, dict[str, CsType]] = {}
    fqns_for: dict[str, dict[str, str]] = {}
    carried: dict[str, dict[str, CsType]] = {}
    placed: set[tuple[str, str]] = set()  # partial types whose stubs are written (once: in one part of the host)
    for path in sorted(compiled):
        info = infos[path]
        for top in info.tops:
            if top.kind not in STUB_HOSTS or top.insert_at is None:
                continue
            key = (top.namespace, top.name)
            if top.partial and key in placed:
                continue  # a second part in the host file: a second copy of the stubs would be CS0102
            parts = groups.get(key, [path]) if top.partial else [path]
            union: dict[str, CsType] = {}
            local: set[str] = set()
            for p in parts:
                local |= infos[p].local_names
                for tp in infos[p].tops:
                    if tp.namespace == top.namespace and tp.name == top.name:
                        local |= tp.members  # `PyType PyType => ...`: a nested type PyType would clash
                for n, t in wanted.get(p, {}).items():
                    union.setdefault(n, t)
            union = {n: t for n, t in union.items()
                     if n not in local and t.file not in parts and (top.name, n) not in left_out}
            if not union:
                continue
            host = sorted(p for p in parts if any(
                tp.namespace == top.namespace and tp.name == top.name and tp.insert_at is not None
                for tp in infos[p].tops))[0]
            prefix = f"{top.namespace}." if top.namespace else ""
            for p in parts:
                for n, t in union.items():
                    if n in wanted.get(p, {}):
                        names_for.setdefault(p, {})[n] = t
                        # a member of a nested stub is one of the stubbed type's (declared in its file)
                        for printed in (n, *(f"{n}.{x}" for x in nested_names(t))):
                            fqns_for.setdefault(p, {})[f"{prefix}{top.name}.{printed}"] = n
                            fqns_for[p][f"{top.name}.{printed}"] = n
            if host == path:
                if top.partial:
                    placed.add(key)
                for n, t in union.items():
                    carried.setdefault(path, {})[f"{prefix}{top.name}.{n}"] = t
                    carried[path][f"{top.name}.{n}"] = t
                body = " ".join(_stub_decl(union[n]) for n in sorted(union))
                inserts.setdefault(path, []).append((top.insert_at, " " + body + " "))
    for path in sorted(compiled):
        if path not in names_for and path not in inserts:
            continue
        stubbed, ins = apply_insertions(texts[path], inserts.get(path, []))
        plans[path] = CsStubs(path, stubbed, ins, names_for.get(path, {}), fqns_for.get(path, {}),
                              carried.get(path, {}))
    return plans
