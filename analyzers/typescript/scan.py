"""What one file imports, exports and declares, read from its tree-sitter tree: the import sites the stubs
replace, the names and members it declares, its re-exports and ``extends`` chains (attribution follows them)."""

from __future__ import annotations

import re

from benchsmith.analyzers.typescript.model import Binding, FileInfo, ImportSite
from benchsmith.analyzers.typescript.positions import FilePositions

IDENT_RE = re.compile(r"[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*")


class Scanner:
    """Top-level statements of one file -> a ``FileInfo``.  ``require_calls``: CommonJS ``require`` declarations
    are import sites too (JavaScript); a language whose grammar spells declarations differently subclasses
    ``_declare``."""

    def __init__(self, require_calls: bool = False) -> None:
        self.require_calls = require_calls

    def scan(self, path: str, text: str, declaration: bool, parser) -> FileInfo:
        """``declaration``: a ``.d.ts`` file (compiled, never stubbed); ``parser``: the file's tree-sitter parser."""
        pos = FilePositions(text)
        info = FileInfo(path, text, pos, declaration)
        root = parser.parse(text.encode("utf-8")).root_node
        if root.has_error:
            # The grammar lags tsc (mobx: generic call signatures in an interface without `;`, a parameter named
            # `any`): the file is still compiled and analysed from the error-tolerant tree.  Only statements
            # without an error inside are read; tsc decides whether the file really is broken.
            err = _first_error(root)
            where = f"line {err.start_point[0] + 1}" if err is not None else "somewhere"
            info.parse_error = f"tree-sitter cannot parse it ({where})"
        for node in root.named_children:
            if not node.has_error:
                self._top_level(node, info)
        return info

    def _top_level(self, node, info: FileInfo) -> None:
        pos = info.positions
        t = node.type
        if t == "import_statement":
            site = self._import_site(node, pos)
            if site is not None:
                info.sites.append(site)
            else:
                info.other_module_syntax = True
            return
        if t in ("lexical_declaration", "variable_declaration") and self.require_calls:
            site = self._require_site(node, pos)
            if site is not None:
                info.sites.append(site)
                return
        if t == "export_statement":
            info.other_module_syntax = True
            self._export(node, info)
            return
        if t in ("ambient_declaration", "expression_statement"):  # `declare ...`; a top-level `namespace N {}`
            for c in node.named_children:
                self._declare(c, info)
            return
        self._declare(node, info)

    def _import_site(self, node, pos: FilePositions) -> ImportSite | None:
        start, end = pos.to_char(node.start_byte), pos.to_char(node.end_byte)
        spec_node = node.child_by_field_name("source")
        req = next((c for c in node.named_children if c.type == "import_require_clause"), None)
        if req is not None:  # import R = require('./r')
            spec = string_value(req.child_by_field_name("source"))
            ident = next((c for c in req.named_children if c.type == "identifier"), None)
            if spec is None or ident is None:
                return None
            site = ImportSite(start, end, spec, es=True)
            site.bindings.append(Binding(node_text(ident), None, site))
            return site
        spec = string_value(spec_node)
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if spec is None or clause is None:
            return None  # a side-effect import binds nothing
        site = ImportSite(start, end, spec, es=True)
        for c in clause.named_children:
            if c.type == "identifier":
                site.bindings.append(Binding(node_text(c), "default", site))
            elif c.type == "namespace_import":
                ident = next((x for x in c.named_children if x.type == "identifier"), None)
                if ident is not None:
                    site.bindings.append(Binding(node_text(ident), None, site))
            elif c.type == "named_imports":
                for spec_node in c.named_children:
                    if spec_node.type != "import_specifier":
                        continue
                    name = spec_node.child_by_field_name("name")
                    alias = spec_node.child_by_field_name("alias")
                    imported = node_text(name)
                    if name is not None and name.type == "string":
                        imported = string_value(name)  # import { "a-b" as ab }
                    local = node_text(alias) if alias is not None else imported
                    if imported and local and IDENT_RE.fullmatch(local):
                        site.bindings.append(Binding(local, imported, site))
        return site if site.bindings else None

    def _require_site(self, node, pos: FilePositions) -> ImportSite | None:
        """``const x = require('./x')`` / ``const {a, b: c} = require('./x')`` with a single declarator."""
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(decls) != 1:
            return None
        value = decls[0].child_by_field_name("value")
        pattern = decls[0].child_by_field_name("name")
        if value is None or pattern is None or value.type != "call_expression":
            return None
        fn = value.child_by_field_name("function")
        args = value.child_by_field_name("arguments")
        if fn is None or node_text(fn) != "require" or args is None or args.named_child_count != 1:
            return None
        spec = string_value(args.named_children[0])
        if spec is None:
            return None
        site = ImportSite(pos.to_char(node.start_byte), pos.to_char(node.end_byte), spec, es=False)
        if pattern.type == "identifier":
            site.bindings.append(Binding(node_text(pattern), None, site))
        elif pattern.type == "object_pattern":
            for p in pattern.named_children:
                if p.type == "shorthand_property_identifier_pattern":
                    site.bindings.append(Binding(node_text(p), node_text(p), site))
                elif p.type == "pair_pattern":
                    key, val = p.child_by_field_name("key"), p.child_by_field_name("value")
                    if key is not None and val is not None and val.type == "identifier":
                        site.bindings.append(Binding(node_text(val), node_text(key), site))
                    else:
                        return None
                else:
                    return None
        else:
            return None
        return site if site.bindings else None

    def _export(self, node, info: FileInfo) -> None:
        source = string_value(node.child_by_field_name("source"))
        decl = node.child_by_field_name("declaration")
        if any(c.type == "default" for c in node.children):
            info.declared.add("default")
        if decl is not None:
            self._declare(decl, info)
            name = node_text(decl.child_by_field_name("name"))
            if "default" in info.declared and name:  # `export default class X`: members reachable as 'default'
                if name in info.members:
                    info.members["default"] = info.members[name]
                if name in info.heritage:
                    info.heritage["default"] = info.heritage[name]
            return
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if clause is None:
            if source is not None and any(c.type == "*" for c in node.children):
                ns = next((c for c in node.named_children if c.type == "namespace_export"), None)
                if ns is None:
                    info.star_exports.append(source)
                else:  # export * as ns from './x'
                    ident = next((x for x in ns.named_children if x.type in ("identifier", "string")), None)
                    if ident is not None:
                        info.reexports.append((source, "*", node_text(ident).strip("'\"")))
            return
        for spec in clause.named_children:
            if spec.type != "export_specifier":
                continue
            name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
            local = node_text(name)
            exported = node_text(alias) if alias is not None else local
            if not local or not exported:
                continue
            if source is not None:
                info.reexports.append((source, local, exported))
            else:
                info.local_exports[exported] = local

    def _declare(self, node, info: FileInfo) -> None:
        t = node.type
        if t in ("lexical_declaration", "variable_declaration"):
            for d in node.named_children:
                if d.type == "variable_declarator":
                    n = d.child_by_field_name("name")
                    if n is not None and n.type == "identifier":
                        info.declared.add(node_text(n))
            return
        name = node.child_by_field_name("name")
        if name is None:
            return
        if t in ("class_declaration", "abstract_class_declaration", "class", "interface_declaration",
                 "function_declaration", "generator_function_declaration", "function_signature",
                 "type_alias_declaration", "enum_declaration", "internal_module", "module"):
            info.declared.add(node_text(name).strip("'\""))
        if t in ("class_declaration", "abstract_class_declaration", "interface_declaration"):
            bases = _heritage(node)
            if bases:
                info.heritage[node_text(name)] = bases
        if t in ("function_declaration", "function_signature"):
            ret = _return_type(node)
            if ret:
                info.returns.setdefault("", {})[node_text(name)] = ret
        if t in ("class_declaration", "abstract_class_declaration", "interface_declaration", "enum_declaration"):
            body = node.child_by_field_name("body")
            info.members.setdefault(node_text(name), set()).update(_members(node))
            info.member_types.setdefault(node_text(name), {}).update(_member_types(body))
            info.returns.setdefault(node_text(name), {}).update(
                {node_text(c.child_by_field_name("name")): r for c in (body.named_children if body else ())
                 if c.type in _METHODS and (r := _return_type(c))})
        elif t == "type_alias_declaration":  # type T = { a: ...; m(): ... }
            value = node.child_by_field_name("value")
            if value is not None and value.type == "object_type":
                info.members.setdefault(node_text(name), set()).update(_members(value, value))
                info.member_types.setdefault(node_text(name), {}).update(_member_types(value))
        elif t in ("internal_module", "module"):  # namespace N { export ... }: its exports are N's members
            self._namespace(node_text(name).strip("'\""), node, info)

    def _namespace(self, ns: str, node, info: FileInfo) -> None:
        """A namespace's exported declarations are members of ``ns``; a class or interface inside it is recorded
        as ``ns.Name`` (``ns.Name`` in a type names it)."""
        body = node.child_by_field_name("body")
        inner = FileInfo(info.path, "", info.positions, info.declaration)
        for c in body.named_children if body is not None else ():
            decl = c.child_by_field_name("declaration") if c.type == "export_statement" else None
            if decl is not None:
                self._declare(decl, inner)
        info.members.setdefault(ns, set()).update(inner.declared)
        for cls, members in inner.members.items():
            info.members.setdefault(f"{ns}.{cls}", set()).update(members)
        for cls, types in inner.member_types.items():
            info.member_types.setdefault(f"{ns}.{cls}", {}).update(types)
        for owner, returns in inner.returns.items():
            info.returns.setdefault(f"{ns}.{owner}" if owner else ns, {}).update(returns)
        for cls, bases in inner.heritage.items():
            info.heritage.setdefault(f"{ns}.{cls}", bases)


def string_value(node) -> str | None:
    """The value of a string literal node without escapes (None when it has any)."""
    if node is None or node.type != "string":
        return None
    parts = [c for c in node.named_children]
    if any(c.type != "string_fragment" for c in parts):
        return None
    return "".join(c.text.decode("utf-8", errors="replace") for c in parts)


def node_text(node) -> str | None:
    return node.text.decode("utf-8", errors="replace") if node is not None else None


def _first_error(node):
    if node.type == "ERROR" or node.is_missing:
        return node
    for c in node.children:
        if c.has_error or c.is_missing or c.type == "ERROR":
            found = _first_error(c)
            if found is not None:
                return found
    return None


def _heritage(node) -> list[tuple[str, str | None]]:
    """Bases a class/interface extends: ``A`` -> (A, None); ``ns.Base`` -> (ns, 'Base')."""
    out: list[tuple[str, str | None]] = []
    clauses = [c for c in node.named_children if c.type in ("class_heritage", "extends_type_clause")]
    for clause in clauses:
        ext = [clause] if clause.type == "extends_type_clause" else \
            [c for c in clause.named_children if c.type == "extends_clause"]
        for e in ext:
            for v in e.named_children:
                if v.type in ("identifier", "type_identifier"):
                    out.append((node_text(v), None))
                elif v.type in ("member_expression", "nested_type_identifier", "nested_identifier"):
                    obj = v.named_children[0] if v.named_children else None
                    prop = v.named_children[-1] if v.named_children else None
                    if obj is not None and obj.type == "identifier" and prop is not None and prop is not obj:
                        out.append((node_text(obj), node_text(prop)))
                elif v.type == "generic_type":
                    inner = v.named_children[0] if v.named_children else None
                    if inner is not None and inner.type in ("type_identifier", "identifier"):
                        out.append((node_text(inner), None))
    return out


_MEMBER_NODES = frozenset({"public_field_definition", "method_definition", "method_signature", "property_signature",
                           "abstract_method_signature", "enum_assignment"})


def type_name_text(node) -> str | None:
    """The name a type node names, when it is one name (``X``, ``ns.X``, ``X<T>``, ``X | undefined``)."""
    if node is None:
        return None
    if node.type in ("type_identifier", "nested_type_identifier"):
        return node_text(node)
    if node.type == "generic_type":
        return type_name_text(node.child_by_field_name("name"))
    if node.type == "union_type":
        real = [c for c in node.named_children if node_text(c) not in ("undefined", "null")]
        return type_name_text(real[0]) if len(real) == 1 else None
    return None


_METHODS = frozenset({"method_definition", "method_signature", "abstract_method_signature"})


def _return_type(node) -> str | None:
    ann = node.child_by_field_name("return_type")
    return type_name_text(ann.named_children[0]) if ann is not None and ann.named_children else None


def _member_types(body) -> dict[str, str]:
    """Member -> the name of its declared type, for the fields and property signatures of a body that have one
    (constructor parameter properties included)."""
    out: dict[str, str] = {}
    for c in body.named_children if body is not None else ():
        params = []
        if c.type in ("public_field_definition", "property_signature"):
            params = [(c.child_by_field_name("name"), c.child_by_field_name("type"))]
        elif c.type == "method_definition" and node_text(c.child_by_field_name("name")) == "constructor":
            ps = c.child_by_field_name("parameters")
            params = [(p.child_by_field_name("pattern"), p.child_by_field_name("type"))
                      for p in (ps.named_children if ps is not None else [])
                      if any(x.type in ("accessibility_modifier", "readonly") for x in p.children)]
        for name, ann in params:
            if name is None or ann is None or ann.type != "type_annotation" or not ann.named_children:
                continue
            text = type_name_text(ann.named_children[0])
            if text:
                out[node_text(name).strip("'\"")] = text
    return out


def _members(node, body=None) -> set[str]:
    """Member names of a class/interface/enum declaration (constructor parameter properties included), or of an
    object type given as ``body``."""
    body = body if body is not None else node.child_by_field_name("body")
    out: set[str] = set()
    if body is None:
        return out
    for c in body.named_children:
        if c.type == "property_identifier" or c.type == "string":  # enum members
            out.add(node_text(c).strip("'\""))
        elif c.type in _MEMBER_NODES:
            name = c.child_by_field_name("name")
            if name is None:
                continue
            text = node_text(name).strip("'\"")
            out.add(text)
            if c.type == "method_definition" and text == "constructor":
                params = c.child_by_field_name("parameters")
                for p in params.named_children if params is not None else []:
                    if any(x.type in ("accessibility_modifier", "readonly", "override_modifier") for x in p.children):
                        pat = p.child_by_field_name("pattern")
                        if pat is not None and pat.type == "identifier":
                            out.add(node_text(pat))
    return out

