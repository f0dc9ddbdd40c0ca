"""The javac driver: its source (``driver/BenchsmithJavac.java``, package data), the options it runs javac with,
and the JSON lines it prints, parsed.

The driver is our own code; nothing from the analysed repository is ever loaded.  It uses the public
``javax.tools`` API, so diagnostics come back with their *key* (``compiler.err.cant.resolve.location``), the file
as given and exact UTF-16 offsets (start, preferred, end): nothing depends on the localised text layout, tab
expansion or the exit code.  It parses first and marks the phase boundary, which tells parser errors (a file javac
cannot read) from attribution errors.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass
class JavacRun:
    diagnostics: list[JavacDiagnostic]
    done: bool
    crash: str | None = None


def parse_driver_output(stdout: str) -> JavacRun:
    """The driver's JSON lines -> diagnostics; lines that are not ours (JVM warnings) are ignored."""
    diags: list[JavacDiagnostic] = []
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
        elif "code" in obj:
            file = obj.get("file")
            if file is not None:
                file = PurePosixPath(str(file).replace("\\", "/")).as_posix()
                file = file[2:] if file.startswith("./") else file
            diags.append(JavacDiagnostic(str(obj.get("kind", "")), str(obj.get("code", "")), file,
                                         int(obj.get("pos", -1)), int(obj.get("start", -1)), int(obj.get("end", -1)),
                                         int(obj.get("line", -1)), int(obj.get("col", -1)), str(obj.get("msg", "")),
                                         parse_phase))
    return JavacRun(diags, done, crash)
