"""Go stubs: a file's imports of project packages blanked out in place, and a ``var x struct{}`` per bound name
appended after its last line; and ``//line`` directives neutralised in every analysed copy."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from benchsmith.analyzers.go.scan import GoFile

IDENT_RE = re.compile(r"[^\W\d]\w*")


@dataclass
class GoStubs:
    path: str
    text: str  # the stubbed text
    first_stub_line: int  # 0-based: lines from here on are ours
    locals: dict[str, str]  # bound name -> package directory
    dots: list[str]  # directories of dot imports


def _blank(text: str) -> str:
    return "".join(c if c in "\r\n" else " " for c in text)


def neutralise_line_directives(text: str) -> str:
    """``text`` with every ``//line`` and ``/*line`` directive comment blanked to spaces (line breaks kept, so every
    position is unchanged).  A directive makes go/scanner report later positions in another file and line; the
    driver asks for raw positions, and the analysed copy holds no directive either, so nothing a repository writes
    can move a diagnostic.  Comments are found by lexing (strings, runes and raw strings skipped), so a directive
    quoted in a string literal stays as it is."""
    if "//line " not in text and "/*line " not in text:
        return text
    out: list[str] = []
    i, n, last = 0, len(text), 0
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == "`":
            j = text.find("`", i + 1)
            i = n if j < 0 else j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            if text.startswith("line ", i + 2):
                out += [text[last:i], _blank(text[i:j])]
                last = j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            if text.startswith("line ", i + 2):
                out += [text[last:i], _blank(text[i:j])]
                last = j
            i = j
        else:
            i += 1
    out.append(text[last:])
    return "".join(out)


def stub_file(info: GoFile, lib_names: Mapping[str, str], paths_to_dirs: Mapping[str, str]) -> GoStubs | None:
    """The stubbed text of one file, or None when it imports no project package."""
    if info.parse_error or info.package is None:
        return None
    locals_: dict[str, str] = {}
    dots: list[str] = []
    cut: list[tuple[int, int]] = []
    for imp in info.imports:
        d = paths_to_dirs.get(imp.path)
        if d is None or d not in lib_names or imp.alias == "_":
            continue  # external, the standard library, a directory without an importable package, a blank import
        if imp.alias == ".":
            dots.append(d)
        else:
            local = imp.alias or lib_names[d]
            if not IDENT_RE.fullmatch(local) or local in locals_:
                continue
            locals_[local] = d
        cut.append((imp.start, imp.end))
    if not cut:
        return None
    pieces, last = [], 0
    for start, end in sorted(cut):
        pieces += [info.text[last:start], _blank(info.text[start:end])]
        last = end
    pieces.append(info.text[last:])
    body = "".join(pieces)
    if body and not body.endswith("\n"):
        body += "\n"
    first = body.count("\n")
    body += "".join(f"var {name} struct{{}}\n" for name in sorted(locals_))
    return GoStubs(info.path, body, first, locals_, dots)

