"""Stub planning: each import of a project file is replaced, in place, by empty declarations bound to the same
local names (``class A {} namespace A {}``: the class answers value and type uses, the merged namespace turns
``ns.Foo`` in a type position into TS2694 *at* ``Foo``).  The replaced statement's line breaks are kept, so both
trees have the same lines and a diagnostic on any other line has the same (line, column) in both."""

from __future__ import annotations

from benchsmith.analyzers.typescript.model import Binding, FileInfo, StubbedFile
from benchsmith.analyzers.typescript.positions import TSC_LINE_BREAKS
from benchsmith.analyzers.typescript.resolver import ModuleResolver


def stub_declarations(local: str, namespace: bool) -> str:
    """The empty declarations standing for one imported name (``namespace`` is TypeScript syntax only)."""
    return f"class {local} {{}} namespace {local} {{}}" if namespace else f"class {local} {{}}"


def stub_file(info: FileInfo, namespace: bool) -> StubbedFile | None:
    """The stubbed text of one file whose sites are resolved; None when it imports no other project file."""
    sites = [s for s in info.sites if s.target is not None and s.target != info.path]
    if not sites:
        return None
    pos = info.positions
    text = info.text
    keep_module = any(s.es for s in sites) and not info.other_module_syntax and \
        all(s.target is not None for s in info.sites if s.es)
    pieces: list[str] = []
    last = 0
    lines: set[int] = set()
    locals_: dict[str, Binding] = {}
    for i, site in enumerate(sorted(sites, key=lambda s: s.start)):
        stub = " ".join(stub_declarations(b.local, namespace) for b in site.bindings)
        if i == 0 and keep_module:
            stub += " export {};"  # the file must stay a module, or its stubs would become globals
        breaks = "".join(m.group(0) for m in TSC_LINE_BREAKS.finditer(text, site.start, site.end))
        pieces += [text[last: site.start], stub, breaks]
        last = site.end
        lines.update(range(pos.tsc_line(site.start), pos.tsc_line(site.end) + 1))
        for b in site.bindings:
            locals_[b.local] = b
    pieces.append(text[last:])
    return StubbedFile(info.path, "".join(pieces), lines, locals_)


def plan_stubs(files: dict[str, FileInfo], resolver: ModuleResolver, namespace: bool) -> dict[str, StubbedFile]:
    """Resolve every file's import sites and stub each file with project imports (declaration files and
    JavaScript companions are compiled as they are)."""
    stubbed: dict[str, StubbedFile] = {}
    for path in sorted(files):
        info = files[path]
        for site in info.sites:
            site.target = resolver.resolve(site.specifier, path)
        if info.declaration or info.companion:
            continue
        s = stub_file(info, namespace)
        if s is not None:
            stubbed[path] = s
    return stubbed
