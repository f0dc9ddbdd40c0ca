"""JavaScript: the TypeScript analyzer with the compiler in JavaScript mode (``allowJs``, ``checkJs``).

Everything but the settings below is the TypeScript analyzer's (the ``analyzers/typescript/`` package): the same pinned
``tsc``, the same two batched compiles (original tree, stubbed tree), the same diff of member/name/arity
diagnostics.  What differs for JavaScript:

- sources are ``.js``/``.jsx``/``.mjs``/``.cjs`` files, parsed with tree-sitter-javascript;
- besides ES ``import`` statements, CommonJS ``const x = require('./x')`` / ``const {a, b: c} = require('./x')``
  declarations of project files are stubbed (``stub_require_calls``);
- a stub is ``class x {}`` only (``namespace`` is TypeScript syntax);
- an extensionless specifier resolves to ``.js`` then ``.jsx`` (what tsc tries for JavaScript files), an
  explicit ``.js``/``.mjs``/``.cjs`` one to that very file (no mapping to ``.ts``);
- the compiler checks JavaScript (``checkJs``) with JSDoc types; ``noImplicitAny`` stays off, so untyped code is
  ``any`` and only names that became stubs produce new errors;
- semicolon-free code is common, so the example builder also ends a statement where its tree-sitter node ends
  (``statement_containers``), not only at a ``;``, ``{`` or ``}`` token;
- modules are often plain objects (``export default {...utils, ...platform}``, ``module.exports = {...}``), so a
  member's defining file is checked: when the module file never names the member, the project files it imports
  are searched (breadth first, declarations first); a member found nowhere is recorded, not guessed.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from benchsmith.analyzers.base import AT_NAME, AnalysisResult
from benchsmith.analyzers.typescript import FileInfo, Plan, TypeScriptAnalyzer
from benchsmith.analyzers.typescript.scan import Scanner, node_text
from benchsmith.records import CrossFileRef, Exclusion, Reason, Stage


class JavaScriptScanner(Scanner):
    def _declare(self, node, info: FileInfo) -> None:
        """The TypeScript declarations, plus what tree-sitter-javascript spells differently: ``class_heritage``
        holds the base expression itself (no ``extends_clause``) and class fields are ``field_definition``s."""
        super()._declare(node, info)
        if node.type not in ("class_declaration", "class"):
            return
        name = node_text(node.child_by_field_name("name"))
        if not name:
            return
        heritage = next((c for c in node.named_children if c.type == "class_heritage"), None)
        bases: list[tuple[str, str | None]] = []
        for v in heritage.named_children if heritage is not None else ():
            if v.type == "identifier":
                bases.append((node_text(v), None))
            elif v.type == "member_expression":
                obj, prop = v.child_by_field_name("object"), v.child_by_field_name("property")
                if obj is not None and obj.type == "identifier" and prop is not None:
                    bases.append((node_text(obj), node_text(prop)))
        if bases and not info.heritage.get(name):
            info.heritage[name] = bases
        body = node.child_by_field_name("body")
        fields = {node_text(c.child_by_field_name("property")) for c in body.named_children
                  if c.type == "field_definition" and c.child_by_field_name("property") is not None} \
            if body is not None else set()
        info.members.setdefault(name, set()).update(f.strip("'\"") for f in fields if f)


class JavaScriptAnalyzer(TypeScriptAnalyzer):
    language = "javascript"
    extensions = (".js", ".jsx", ".mjs", ".cjs")
    grammar_module = "tree_sitter_javascript"
    import_pattern = r"\s*(?:import\b|export\s*(?:\*|\{)[^;]*?\bfrom\b|export\s*\{\s*$)"
    released_cursor = AT_NAME  # CrossCodeEval released no JavaScript: --cursor released keeps the name
    grammar_function = "language"
    comment_prefix = "//"
    dockerfile = "tsc.Dockerfile"  # the same toolchain image: node + the pinned TypeScript
    # Code without semicolons is common JavaScript: a statement ends with its node when no ';' token ends it.
    statement_containers = frozenset({"program", "statement_block", "class_body", "switch_case", "switch_default"})

    declaration_suffixes: ClassVar[tuple[str, ...]] = ()
    resolution_extensions: ClassVar[tuple[str, ...]] = (".js", ".jsx")
    # an explicit extension names that file (tsc also tries '.jsx' for a '.js' specifier)
    extension_map: ClassVar[dict[str, tuple[str, ...]]] = {
        ".js": (".js", ".jsx"), ".jsx": (".jsx",), ".mjs": (".mjs",), ".cjs": (".cjs",),
    }
    namespace_stubs: ClassVar[bool] = False
    stub_require_calls: ClassVar[bool] = True
    scanner = JavaScriptScanner
    config_patterns: ClassVar[tuple[str, ...]] = ("jsconfig*.json", "tsconfig*.json")

    @classmethod
    def grammar_for(cls, path: str) -> str:
        return cls.grammar_function  # tree-sitter-javascript parses JSX in any of these files

    def compiler_options(self) -> dict[str, Any]:
        opts = super().compiler_options()
        opts.update({
            "allowJs": True,
            "checkJs": True,
            "noImplicitAny": False,
            "maxNodeModuleJsDepth": 0,  # never read a package's JavaScript (noResolve already keeps it out)
        })
        return opts

    # -- defining files of members of plain-object modules ----------------------------------------------------
    def finish(self, plan: Plan, result: AnalysisResult) -> None:
        super().finish(plan, result)
        refs = result.refs
        kept: list[CrossFileRef] = []
        unlocated: list[CrossFileRef] = []
        moved = 0
        for r in refs:
            text = plan.files[r.defining_file].text if r.defining_file in plan.files else ""
            binding = plan.stubbed[r.file].locals.get(r.import_name) if r.file in plan.stubbed else None
            # a called/constructed import is named as exported there (`const { clamp: limit } = require(...)`)
            exported = binding.imported if binding is not None and r.symbol == r.import_name else None
            if _names(text, r.symbol) or (exported and exported not in ("default", "*") and _names(text, exported)):
                kept.append(r)
                continue
            found = self._through_imports(plan, r.defining_file, r.symbol, r.file)
            if found is None:
                unlocated.append(r)
                continue
            r.defining_file = found
            moved += 1
            kept.append(r)
        result.refs = kept
        result.stats.update(refs=len(kept), defining_file_via_imports=moved, not_in_repository=len(refs) - len(kept))
        for r in unlocated:
            result.exclusions.append(Exclusion(
                f"{plan.repo}/{r.file}:{r.line + 1}:{r.column + 1}", Stage.ANALYZER,
                Reason.SYMBOL_NOT_IN_REPOSITORY, f"{r.symbol!r} (via {r.import_name}) is named neither in "
                f"{r.defining_file} nor in the project files it imports", plan.repo))

    def _through_imports(self, plan: Plan, start: str | None, symbol: str, exclude: str, depth: int = 3) -> str | None:
        """The first project file (breadth first over imports and re-exports of ``start``) that declares
        ``symbol``, else the first that names it; never ``exclude`` (the referring file)."""
        if start not in plan.files:
            return None
        order: list[str] = []
        seen = {start}
        frontier = [start]
        for _ in range(depth):
            nxt: list[str] = []
            for f in frontier:
                info = plan.files[f]
                specs = [s.target for s in info.sites] + [plan.resolver.resolve(spec, f) for spec in
                                                          [r[0] for r in info.reexports] + info.star_exports]
                for t in specs:
                    if t and t not in seen and t in plan.files:
                        seen.add(t)
                        nxt.append(t)
            order += nxt
            frontier = nxt
        candidates = [f for f in order if f != exclude]
        for f in candidates:
            if _declares(plan.files[f].text, symbol):
                return f
        return next((f for f in candidates if _names(plan.files[f].text, symbol)), None)


def _names(text: str, symbol: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])", text) is not None


def _declares(text: str, symbol: str) -> bool:
    s = re.escape(symbol)
    return re.search(rf"(?:\bfunction\*?\s+|\bclass\s+|\b(?:const|let|var)\s+|^[ \t]*(?:(?:static|async|get|set)\s+)*"
                     rf"|\.|[{{,]\s*){s}(?![\w$])\s*[(:=]", text, re.M) is not None

