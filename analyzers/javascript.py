"""JavaScript: the TypeScript analyzer with the compiler in JavaScript mode (``allowJs``, ``checkJs``).

Everything but the settings below is the TypeScript analyzer's (``analyzers/typescript.py``): the same pinned
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
  (``statement_containers``), not only at a ``;``, ``{`` or ``}`` token.
"""

from __future__ import annotations

from typing import Any, ClassVar

from benchsmith.analyzers.typescript import FileInfo, TypeScriptAnalyzer, _name


class JavaScriptAnalyzer(TypeScriptAnalyzer):
    language = "javascript"
    extensions = (".js", ".jsx", ".mjs", ".cjs")
    grammar_module = "tree_sitter_javascript"
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

    def _declare(self, node, info: FileInfo) -> None:
        """The TypeScript declarations, plus what tree-sitter-javascript spells differently: ``class_heritage``
        holds the base expression itself (no ``extends_clause``) and class fields are ``field_definition``s."""
        super()._declare(node, info)
        if node.type not in ("class_declaration", "class"):
            return
        name = _name(node.child_by_field_name("name"))
        if not name:
            return
        heritage = next((c for c in node.named_children if c.type == "class_heritage"), None)
        bases: list[tuple[str, str | None]] = []
        for v in heritage.named_children if heritage is not None else ():
            if v.type == "identifier":
                bases.append((_name(v), None))
            elif v.type == "member_expression":
                obj, prop = v.child_by_field_name("object"), v.child_by_field_name("property")
                if obj is not None and obj.type == "identifier" and prop is not None:
                    bases.append((_name(obj), _name(prop)))
        if bases and not info.heritage.get(name):
            info.heritage[name] = bases
        body = node.child_by_field_name("body")
        fields = {_name(c.child_by_field_name("property")) for c in body.named_children
                  if c.type == "field_definition" and c.child_by_field_name("property") is not None} \
            if body is not None else set()
        info.members.setdefault(name, set()).update(f.strip("'\"") for f in fields if f)

