"""The rewrite rules behind ``csharp_downlevel.downlevel`` (one function per construct)."""

from __future__ import annotations


def collect_edits(text, tree, *, global_usings, value_types):
    return [], [], []


def global_using_directives(text, tree):
    return []
