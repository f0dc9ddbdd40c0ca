"""The one CLI, ``benchsmith``, with subcommands; ``build-ccEval`` is an alias for ``benchsmith build cceval``.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and ``run(args) -> int``; modules are
imported only to build their parser, and they import heavy libraries (torch, vllm, ray) lazily inside ``run``.
"""

from __future__ import annotations

import argparse
import re
import sys
from types import ModuleType
from typing import Sequence

from benchsmith.registry import Registry, did_you_mean

def _commands() -> Registry[ModuleType]:
    """Every command -> its module (``add_arguments`` and ``run``), with its help line as the note: the core's
    each benchmark family's, then the core's own (``benchsmith.families``).  A module is imported only to build its parser;
    one whose optional dependency is missing becomes a command that says so."""
    from benchsmith.families import families

    entries: dict[str, tuple[str, str]] = {}
    for family in families():
        entries.update(family.commands)
    entries.update(CORE_COMMANDS)
    return Registry("command", {name: module for name, (module, _) in entries.items()},
                    notes={name: note for name, (_, note) in entries.items()})


CORE_COMMANDS = {
    "generate": ("benchsmith.evaluate.generation.command", "generate completions with vLLM / transformers / HTTP"),
}
COMMANDS: Registry[ModuleType] = _commands()


class _Parser(argparse.ArgumentParser):
    """argparse, with the closest choice suggested when a command or a choice is misspelt."""

    _INVALID = re.compile(r"argument .*: invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)$")

    def error(self, message: str):  # type: ignore[override]
        m = self._INVALID.match(message)
        if m:
            message += did_you_mean(m["value"], re.findall(r"'([^']*)'", m["choices"]))
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="benchsmith",
        description="Build code-LLM benchmarks (CrossCodeEval, HumanExtension) from real code and evaluate models "
                    "on them.  `build-ccEval ...` is `benchsmith build cceval ...`.")
    parser.add_argument("--version", action="version", version=_version())
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    top.required = True
    groups: dict[str, argparse._SubParsersAction] = {}
    for name in COMMANDS:
        path, help_text = name.split(), COMMANDS.note(name)
        if len(path) == 1:
            sub = top.add_parser(path[0], help=help_text, description=help_text)
        else:
            if path[0] not in groups:
                g = top.add_parser(path[0], help=f"{path[0]} subcommands")
                groups[path[0]] = g.add_subparsers(dest=f"{path[0]}_command", metavar="WHAT")
                groups[path[0]].required = True
            sub = groups[path[0]].add_parser(path[1], help=help_text, description=help_text)
        _attach(sub, name)
    return parser


def _attach(sub: argparse.ArgumentParser, name: str) -> None:
    module = COMMANDS[name]
    try:
        mod = COMMANDS.load(name)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            sub.set_defaults(_run=lambda args, m=module: _unavailable(m))
            return
        raise
    mod.add_arguments(sub)
    sub.set_defaults(_run=mod.run)


def _unavailable(module: str) -> int:
    print(f"benchsmith: this command is not available in this installation ({module} missing)", file=sys.stderr)
    return 2


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("benchsmith")
    except Exception:  # pragma: no cover - running from a source tree without install
        return "unknown"


def main(argv: Sequence[str] | None = None, command_line: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    # The command as the user typed it (argv as given, not resolved): the dataset card records it, so the same
    # command writes the same bytes.
    args._command_line = list(command_line) if command_line is not None else ["benchsmith", *argv]
    return int(args._run(args) or 0)


def build_cceval_main(argv: Sequence[str] | None = None) -> int:
    """``build-ccEval ...`` == ``benchsmith build cceval ...``"""
    argv = list(sys.argv[1:] if argv is None else argv)
    return main(["build", "cceval", *argv], command_line=["build-ccEval", *argv])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
