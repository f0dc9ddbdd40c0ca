"""pylint: our rcfile and message list, one whole-tree run, and its json2 report turned into diagnostics.

Toolchains never load anything from the analysed repository: the rcfile (``pylintrc`` beside this module, a
template whose ``{enable}`` is ``PYLINT_MESSAGES``) loads no plugins, and pylint runs as ``python -I -B -c
<_pylint_driver.py>`` so that the analysed tree is never importable.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from benchsmith import confine
from benchsmith.analyzers.base import Diagnostic
from benchsmith.analyzers.python.lines import python_lines
from benchsmith.runner import Mount, run
from benchsmith.text_positions import byte_col_to_char

if TYPE_CHECKING:
    from benchsmith.analyzers.base import Analyzer

# Messages an empty class in place of a project name produces.  E0602 comes from removed star imports.
PYLINT_MESSAGES = ("E1101", "E0602", "E1102", "E1133", "E1135", "E1136", "E1137")
_HERE = resources.files(__package__)
PYLINT_RC = _HERE.joinpath("pylintrc").read_text(encoding="utf-8")
# The program every pylint run is (``python -I -B -c``): pylint with the analysed tree never importable.
PYLINT_DRIVER = _HERE.joinpath("_pylint_driver.py").read_text(encoding="utf-8")


def write_rcfile(path: Path) -> Path:
    path.write_text(PYLINT_RC.format(enable=",".join(PYLINT_MESSAGES)), encoding="utf-8")
    return path


def run_pylint(analyzer: Analyzer, tree: Path, rcfile: Path, home: Path) -> tuple[list[dict] | None, str]:
    """Run pylint once over ``tree`` as ``analyzer``'s options say (backend, timeout, confinement); returns
    (messages, error text)."""
    options = analyzer.options
    env = {"PYLINTRC": str(rcfile), "PYLINTHOME": str(home), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": "", "HOME": str(home)}
    container = analyzer.container([Mount(str(tree), "/src"), Mount(str(rcfile), "/rc/pylintrc")], "/src")
    # -I: no working directory (the analysed tree), PYTHONPATH or user site on sys.path at start-up; -B
    # instead of PYTHONDONTWRITEBYTECODE, which -I ignores; -c PYLINT_DRIVER: pylint with the tree never
    # importable, whatever its modules are named (pylint adds it to sys.path itself).
    if container is not None:
        argv = ["python", "-I", "-B", "-c", PYLINT_DRIVER, "--rcfile", "/rc/pylintrc"]
        env = {"PYLINTHOME": "/tmp", "HOME": "/tmp"}
    else:
        argv = [sys.executable, "-I", "-B", "-c", PYLINT_DRIVER, "--rcfile", str(rcfile)]
    argv += ["--output-format=json2", "--recursive=y", "--jobs=1", "--score=n", "."]
    conf = None if container else analyzer.confinement(read=(tree, rcfile), scratch=(home,))
    res = run(argv, cwd=None if container else tree, env=env, timeout=options.timeout,
              container=container, confine=conf)
    if res.timed_out:
        return None, f"pylint ran past its {options.timeout:.0f}s timeout"
    if res.oom:
        return None, f"pylint: {confine.oom_message(conf.limits) if conf else 'out of memory'}"
    data = json2_report(res.stdout)
    if data is not None:
        return list(data.get("messages", [])), ""
    tail = (res.stderr or res.stdout).strip().splitlines()[-5:]
    return None, f"pylint exited {res.returncode} without a report: {' | '.join(tail)}"


def json2_report(stdout: str) -> dict | None:
    """pylint's json2 report: the whole of stdout, or (when something printed before it) the last object that
    starts a line and runs to the end."""
    try:
        data = json.loads(stdout)
        return data if isinstance(data, dict) else None
    except json.JSONDecodeError:
        pass
    at = stdout.rfind("\n{\n")
    if at < 0:
        return None
    try:
        data = json.loads(stdout[at + 1:])
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) and "messages" in data else None


def message_path(message: dict) -> str:
    """The file a message is about, '/'-separated, relative to the linted tree."""
    return PurePosixPath(message.get("path", "")).as_posix()


def diagnostics(messages: list[dict], texts: dict[str, str],
                line_maps: dict[str, list[int | None]]) -> list[Diagnostic]:
    """pylint's messages as diagnostics: character columns (pylint's are UTF-8 bytes) and, for a stubbed file,
    original line numbers (``line_maps``); messages about a stub line itself are left out."""
    out: list[Diagnostic] = []
    split: dict[str, list[str]] = {}  # each file is split into lines once, not once per message
    for m in messages:
        path = message_path(m).removeprefix("./")
        text = texts.get(path)
        if text is None:
            continue
        lines = split.get(path)
        if lines is None:
            lines = split[path] = python_lines(text)
        line = int(m.get("line") or 1) - 1
        end_line = m.get("endLine")
        end_line = int(end_line) - 1 if end_line is not None else None
        col = int(m.get("column") or 0)
        end_col = m.get("endColumn")
        if 0 <= line < len(lines):
            col = byte_col_to_char(lines[line], col)
        if end_line is not None and end_col is not None and 0 <= end_line < len(lines):
            end_col = byte_col_to_char(lines[end_line], int(end_col))
        lmap = line_maps.get(path)
        if lmap is not None:
            if not (0 <= line < len(lmap)) or lmap[line] is None:
                continue  # a message about the stub itself
            line = lmap[line]
            if end_line is not None:
                end_line = lmap[end_line] if 0 <= end_line < len(lmap) else None
        out.append(Diagnostic(path, line, col, m.get("messageId", ""), m.get("message", ""), end_line,
                              end_col if end_line is not None else None))
    return out
