"""Java stubs: empty nested types, appended inside each top-level type, that shadow the project types a file uses.

A member type shadows an imported or same-package type inside the class body, so every use of ``Foo`` in the
body now means the empty stub and ``foo.bar()``/``Foo.CONST``/``new Foo(1)`` fail to resolve.  The stubs are
appended right before each top-level type's closing brace, on the same line, so nothing before them moves and a
single stubbed tree serves every file: stubs of different files live in different classes and never collide.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.analyzers.common import Insertions, apply_insertions
from benchsmith.analyzers.java.scan import JavaFileInfo, JavaIndex, JavaType


@dataclass
class JavaStubs:
    path: str
    stubbed_text: str
    insertions: Insertions
    stubs: dict[str, JavaType]  # simple name -> the project type it stands for
    stub_fqns: dict[str, str]  # fully qualified name javac prints for a stub -> simple name


def plan_stubs(info: JavaFileInfo, text: str, index: JavaIndex) -> JavaStubs | None:
    """The stubbed text of one file: nested empty types shadowing the project types it uses."""
    if not info.top_types:
        return None
    chosen: dict[str, JavaType] = {}
    for name in info.single_imports:
        t = index.lookup(name, info.path)
        if t is not None and t.file != info.path:
            chosen.setdefault(t.name, t)
    on_demand: list[JavaType] = []
    for pkg in info.demand_imports:
        if pkg in index.packages:
            on_demand += index.packages[pkg]
        else:
            outer = index.lookup(pkg, info.path)  # import a.b.Outer.* (member types)
            if outer is not None:
                on_demand += [ts[0] for fqn, ts in index.by_fqn.items()
                              if fqn.startswith(outer.fqn + ".") and "." not in fqn[len(outer.fqn) + 1:]]
    same_package = index.packages.get(info.package, [])
    # Same-package types shadow on-demand imports; single-type imports shadow both.
    for t in list(same_package) + on_demand:
        if t.file == info.path or t.name in chosen or t.name not in info.used:
            continue
        chosen[t.name] = index.lookup(t.fqn, info.path) or t
    for name in list(chosen):
        if name in info.local_names:
            del chosen[name]  # a nested stub would clash with (or be shadowed by) the file's own declaration
    if not chosen:
        return None
    decls = []
    for name in sorted(chosen):
        t = chosen[name]
        tp = "<" + ",".join(f"BsT{i}" for i in range(t.arity)) + ">" if t.arity else ""
        if t.kind == "interface":
            decls.append(f"public interface {name}{tp} {{}}")
        elif t.kind == "enum":
            decls.append(f"public enum {name} {{}}")
        elif t.kind == "annotation":
            decls.append(f"public @interface {name} {{}}")
        else:
            decls.append(f"public static class {name}{tp} {{}}")
    body = " ".join(decls)
    inserts = []
    stub_fqns: dict[str, str] = {}
    prefix = f"{info.package}." if info.package else ""
    for top in info.top_types:
        # No newline: every line keeps its number; a ';' ends an enum's constant list if it has none.
        inserts.append((top.insert_at, (" ; " if top.enum else " ") + body + " "))
        for name in chosen:
            stub_fqns[f"{prefix}{top.name}.{name}"] = name
    stubbed, ins = apply_insertions(text, inserts)
    return JavaStubs(info.path, stubbed, ins, chosen, stub_fqns)
