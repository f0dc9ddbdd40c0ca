"""The Go type checker (``benchsmith-gotype``): its sources (``driver/main.go`` and ``driver/go.mod``, package
data), the environment every go command runs in, and the JSON lines the checker prints, parsed.

The checker is our own program (go/parser + go/types from the standard library), built once per Go release into
a cache directory.  It checks every package of the tree in one process and prints one JSON object per line:
start, skip, parse, error, done.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from benchsmith.analyzers.base import json_lines

GOOS, GOARCH = "linux", "amd64"
DRIVER_NAME = "benchsmith-gotype"


@lru_cache(maxsize=None)
def driver_file(name: str) -> str:
    """One of the checker's source files (``main.go``; ``go.mod``, whose language version only gates syntax the
    checker itself uses), as shipped with the package: their texts key the built checker's cache."""
    return resources.files(__package__).joinpath("driver", name).read_text(encoding="utf-8")


def go_env(home: str, cache: str) -> dict[str, str]:
    """Environment of every go command we run: offline, no workspace, no toolchain switch, nothing of the user's
    go env file, caches we own."""
    return {"GOPROXY": "off", "GOFLAGS": "-mod=mod", "GONOSUMDB": "*", "GOSUMDB": "off", "CGO_ENABLED": "0",
            "GOTOOLCHAIN": "local", "GOWORK": "off", "GOENV": "off", "GO111MODULE": "on", "GOPATH": f"{home}/gopath",
            "GOCACHE": cache, "GOMODCACHE": f"{home}/gopath/pkg/mod", "HOME": home, "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8"}


@dataclass(frozen=True)
class GoMessage:
    kind: str  # error | parse | skip
    file: str
    line: int  # 1-based; 0 when absent
    col: int  # 1-based byte column; 0 when absent
    message: str
    soft: bool = False


@dataclass
class GoRun:
    messages: list[GoMessage]
    done: bool
    crash: str | None = None
    importer: str = ""
    go: str = ""


def parse_driver_output(stdout: str) -> GoRun:
    """The driver's JSON lines; anything else (a runtime panic's text) is ignored here and reported by the
    missing ``done`` line."""
    run_ = GoRun([], False)
    for obj in json_lines(stdout):
        kind = obj.get("kind")
        if kind == "done":
            run_.done = True
        elif kind == "crash":
            run_.crash = str(obj.get("msg", ""))
        elif kind == "start":
            run_.importer, run_.go = str(obj.get("importer", "")), str(obj.get("go", ""))
        elif kind in ("error", "parse", "skip"):
            run_.messages.append(GoMessage(kind, str(obj.get("file") or ""), int(obj.get("line") or 0),
                                           int(obj.get("col") or 0), str(obj.get("msg") or obj.get("why") or ""),
                                           bool(obj.get("soft", False))))
    return run_

