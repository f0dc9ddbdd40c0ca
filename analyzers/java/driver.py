"""The javac driver: its source (``driver/BenchsmithJavac.java``, package data), the options it runs javac with,
and the JSON lines it prints, parsed.

The driver is our own code; nothing from the analysed repository is ever loaded.  It uses the public
``javax.tools`` API, so diagnostics come back with their *key* (``compiler.err.cant.resolve.location``), the file
as given and exact UTF-16 offsets (start, preferred, end): nothing depends on the localised text layout, tab
expansion or the exit code.  It parses first and marks the phase boundary, which tells parser errors (a file javac
cannot read) from attribution errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import PurePosixPath

from benchsmith.analyzers.base import json_lines

DRIVER_CLASS = "BenchsmithJavac"


@lru_cache(maxsize=1)
def driver_source() -> str:
    """The driver's Java source, as shipped with the package (its text keys the compiled driver's cache)."""
    return resources.files(__package__).joinpath("driver", f"{DRIVER_CLASS}.java").read_text(encoding="utf-8")


JAVAC_OPTIONS = (
    "-proc:none",  # never run annotation processors (a repository could ship one)
    "-implicit:none",
    "-nowarn",
    "-Xlint:none",
    "-Xmaxerrs", "100000000",
    "-Xmaxwarns", "0",
    "-encoding", "UTF-8",
    "-XDshould-stop.ifError=FLOW",  # keep attributing every class after the first error
    "-XDshould-stop.ifNoError=FLOW",
)
# C1 only: javac runs are short and the C2 compiler threads cost more than they save (3x faster on 2 cores).
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-Xss16m", "-Duser.language=en", "-Duser.country=US",
               "-Dfile.encoding=UTF-8")


@dataclass(frozen=True)
class JavacDiagnostic:
    kind: str
    code: str
    file: str | None
    pos: int  # UTF-16 offsets; -1 when absent
    start: int
    end: int
    line: int
    col: int
    message: str
    parse_phase: bool


@dataclass(frozen=True)
class JavacResolved:
    """A name javac resolved to a declaration in another file of the list (the driver's ``-Dbenchsmith.refs``)."""

    kind: str  # a ReferenceKind value, as the driver read the name's place in the tree
    file: str
    start: int  # UTF-16 offset of the name (-1: a selected name, which ends at ``end``)
    end: int
    name: str  # as javac reads it (unicode escapes decoded)
    owner: str  # the type declaring a member, or the type itself
    defining_file: str
    def_line: int  # 1-based first and last line of the declaration
    def_end: int


@dataclass
class JavacRun:
    diagnostics: list[JavacDiagnostic]
    done: bool
    crash: str | None = None
    resolved: list[JavacResolved] = field(default_factory=list)


def parse_driver_output(stdout: str) -> JavacRun:
    """The driver's JSON lines -> diagnostics; lines that are not ours (JVM warnings) are ignored."""
    diags: list[JavacDiagnostic] = []
    resolved: list[JavacResolved] = []
    done = False
    crash = None
    parse_phase = True
    for obj in json_lines(stdout):
        if "phase" in obj:
            parse_phase = False
        elif "done" in obj:
            done = True
        elif "crash" in obj:
            crash = str(obj["crash"])
        elif "ref" in obj:
            try:
                resolved.append(JavacResolved(str(obj["ref"]), _path(obj["file"]), int(obj["start"]), int(obj["end"]),
                                              str(obj["name"]), str(obj.get("owner", "")), _path(obj["dfile"]),
                                              int(obj["dline"]), int(obj["dend"])))
            except (KeyError, TypeError, ValueError):
                continue  # not a line of ours
        elif "code" in obj:
            file = obj.get("file")
            if file is not None:
                file = _path(file)
            diags.append(JavacDiagnostic(str(obj.get("kind", "")), str(obj.get("code", "")), file,
                                         int(obj.get("pos", -1)), int(obj.get("start", -1)), int(obj.get("end", -1)),
                                         int(obj.get("line", -1)), int(obj.get("col", -1)), str(obj.get("msg", "")),
                                         parse_phase))
    return JavacRun(diags, done, crash, resolved)


@lru_cache(maxsize=4096)  # the same few file names, tens of thousands of times
def _path(file: object) -> str:
    """A file name as the driver prints it -> the tree-relative '/' path the snapshot uses."""
    path = PurePosixPath(str(file).replace("\\", "/")).as_posix()
    return path[2:] if path.startswith("./") else path
