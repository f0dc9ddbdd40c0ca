"""The check that the C# scan reads the same from its cheaper tree (``DownlevelResult.scan_tree`` with
``scan_masks``) as from a fresh parse of the rewritten text: every figure the analysis takes from the scan, every
answer the shim, the verdicts and the blocker prediction ask of its tree.  Shared by the modern corpus's unit test
and the real-code tests."""

from __future__ import annotations

import re

from benchsmith import treesitter
from benchsmith.analyzers.common import walk
from benchsmith.analyzers.csharp.blockers import _signature_names
from benchsmith.analyzers.csharp.downlevel import downlevel
from benchsmith.analyzers.csharp.scan import MEMBER_DECLS, _ancestor, in_body, scan_csharp
from benchsmith.files import SourceFile

GRAMMAR = "tree_sitter_c_sharp"
# the node kinds the shim looks for around a diagnostic's position (beside the bodies)
ANCESTOR_KINDS = (MEMBER_DECLS, frozenset({"using_directive"}),
                  frozenset({"explicit_interface_specifier"}), frozenset({"attribute"}))
FIELDS = ("namespaces", "usings", "tops", "declared", "local_names", "used", "ts_error")


def _spans(nodes) -> list[tuple[int, int, str]]:
    return sorted((n.start_byte, n.end_byte, n.type) for n in nodes)


def assert_same_scan(name: str, src: str) -> int:
    """Asserts it for one file's preprocessed text; returns how many rewrites the scan's tree left out."""
    parser = treesitter.parser(GRAMMAR)
    tree = parser.parse(src.encode("utf-8"))
    res = downlevel(src, tree)
    assert_scan_of_tree(name, res.text, res.scan_tree(tree, parser), res.scan_masks())
    return len(res._scan_left_out())


def assert_scan_of_tree(name: str, text: str, tree, masks=()) -> None:
    """Asserts it for the scan's ``tree`` and ``masks`` of a file's analysed ``text``."""
    parser = treesitter.parser(GRAMMAR)
    got = scan_csharp(SourceFile(name, text), tree, masks)
    want = scan_csharp(SourceFile(name, text), parser.parse(text.encode("utf-8")))
    for field in FIELDS:
        assert getattr(got, field) == getattr(want, field), (name, field)
    # where a diagnostic is, as the shim and the verdicts ask it, at every word: inside a body or not (a body
    # may end at a blanked `!` in one tree and before it in the other), and the declaration, using directive,
    # explicit interface specifier or attribute around it, whose parts the shim reads
    for m in re.finditer(r"\w+", text):
        assert in_body(got, text, m.start()) == in_body(want, text, m.start()), (name, m.start())
        for kinds in ANCESTOR_KINDS:
            a, b = _ancestor(got, text, m.start(), kinds), _ancestor(want, text, m.start(), kinds)
            assert (a and (a.start_byte, a.end_byte, a.type)) == (b and (b.start_byte, b.end_byte, b.type)), \
                (name, m.start(), sorted(kinds))
    # (the blocker prediction reads its captures as sets: their order follows the tree's shape)
    assert {k: _spans(v) for k, v in got.blocker_caps.items()} == \
        {k: _spans(v) for k, v in want.blocker_caps.items()}, name
    # the names of every member's signature, as the blocker prediction reads an override's
    members = [{n.start_byte: _signature_names(n, info) for n in walk(info.tree.root_node) if n.type in MEMBER_DECLS}
               for info in (got, want)]
    assert members[0] == members[1], name
