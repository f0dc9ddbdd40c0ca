"""mcs and csc output -> typed diagnostics, and the compiler choice."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Iterable


class Compiler(str, enum.Enum):
    AUTO = "auto"
    MCS = "mcs"
    CSC = "csc"


_DIAG_RE = re.compile(r"^(?P<file>.+)\((?P<line>\d+),(?P<col>\d+)\): (?P<kind>error|warning) (?P<code>CS\d+): "
                      r"(?P<msg>.*?)(?: \[[^\]]*\])?$")
_QUOTED = re.compile(r"[`'‘]([^`'’]+)['’]")


@dataclass(frozen=True)
class CsDiagnostic:
    file: str
    line: int  # 1-based as printed
    col: int  # 1-based UTF-16 column (tabs count one)
    kind: str
    code: str
    message: str
    # whose output it is: the compilers count line terminators differently (``positions.offset``)
    compiler: Compiler = Compiler.MCS


def parse_compiler_output(text: str, known: Iterable[str] | None = None,
                          compiler: Compiler = Compiler.MCS) -> list[CsDiagnostic]:
    """mcs/csc lines ``path(line,col): error CSnnnn: message`` -> diagnostics (paths '/'-separated, './' dropped).
    Paths may contain spaces, parentheses or non-ASCII characters; ``known`` disambiguates odd ones."""
    known_set = set(known) if known is not None else None
    out: list[CsDiagnostic] = []
    for raw in text.splitlines():
        m = _DIAG_RE.match(raw.strip("\r"))
        if not m:
            continue
        file = m.group("file").strip().replace("\\", "/")
        file = file[2:] if file.startswith("./") else file
        if known_set is not None and file not in known_set:
            # a message containing "(1,2): error CS" could fool the greedy file group: retry non-greedily
            m2 = re.match(r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): (?P<kind>error|warning) (?P<code>CS\d+): "
                          r"(?P<msg>.*?)(?: \[[^\]]*\])?$", raw.strip("\r"))
            f2 = m2.group("file").strip().replace("\\", "/").removeprefix("./") if m2 else None
            if m2 and f2 in known_set:
                m, file = m2, f2
        out.append(CsDiagnostic(file, int(m.group("line")), int(m.group("col")), m.group("kind"), m.group("code"),
                                m.group("msg"), compiler))
    return out


def quoted(message: str) -> list[str]:
    return _QUOTED.findall(message)
