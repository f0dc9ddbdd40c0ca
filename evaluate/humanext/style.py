"""Implementation style of a target function with respect to its auxiliary function.

* ``black_box``: the target *calls* the auxiliary (an ``ast.Call`` whose ``func`` is ``Name(aux)``);
* ``reference``: it only refers to it without calling it (``key=aux``, ``map(aux, xs)``);
* ``white_box``: it does neither -- the model re-implemented the logic (or redefined the name locally);
* ``unparseable``: the prompt plus completion is not valid Python, so there is nothing to classify.

The builder's report counts the human targets with :func:`auxiliary_usage`, on the same counts of calls and
other references (:func:`count_uses`) as the scorer's styles, so both reports count the same way.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from benchsmith.enums import StrEnum


class Style(StrEnum):
    BLACK_BOX = "black_box"
    REFERENCE = "reference"
    WHITE_BOX = "white_box"
    UNPARSEABLE = "unparseable"


def _target_def(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            found = node  # the last definition wins, as at run time
    return found


def _binds_locally(fn: ast.FunctionDef | ast.AsyncFunctionDef, aux: str) -> bool:
    """Is ``aux`` a parameter or assigned/defined inside the target (so ``aux(...)`` is not the auxiliary)?"""
    args = fn.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    if aux in params:
        return True
    for node in ast.walk(fn):
        if node is fn:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == aux:
            return True
        if isinstance(node, ast.Name) and node.id == aux and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name) == aux:
            return True
    return False


@dataclass(frozen=True)
class StyleResult:
    style: Style
    calls: int = 0  # calls of the auxiliary inside the target
    references: int = 0  # other loads of its name


# characters of prompt + completion the classifier parses: far above any function a model writes, while a
# completion of megabytes would cost the parent seconds and memory for a label
SOURCE_LIMIT = 1 << 20


def classify_source(source: str, target: str, auxiliary: str) -> StyleResult:
    """Classify the implementation of ``target`` in ``source`` (prompt + truncated completion)."""
    if len(source) > SOURCE_LIMIT:
        return StyleResult(Style.UNPARSEABLE)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a 100k-term expression nests that deep
        return StyleResult(Style.UNPARSEABLE)
    fn = _target_def(tree, target)
    if fn is None:
        return StyleResult(Style.UNPARSEABLE)
    return classify_function(fn, auxiliary)


def count_uses(node: ast.AST, auxiliary: str) -> tuple[int, int]:
    """(calls of ``auxiliary`` by name, other loads of its name) anywhere under ``node``."""
    called: set[int] = set()
    calls = 0
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == auxiliary:
            calls += 1
            called.add(id(sub.func))
    references = sum(
        1
        for sub in ast.walk(node)
        if isinstance(sub, ast.Name) and sub.id == auxiliary and isinstance(sub.ctx, ast.Load)
        and id(sub) not in called
    )
    return calls, references


def classify_function(fn: ast.FunctionDef | ast.AsyncFunctionDef, auxiliary: str) -> StyleResult:
    if _binds_locally(fn, auxiliary):
        return StyleResult(Style.WHITE_BOX)
    calls, references = count_uses(fn, auxiliary)
    if calls:
        return StyleResult(Style.BLACK_BOX, calls, references)
    if references:
        return StyleResult(Style.REFERENCE, 0, references)
    return StyleResult(Style.WHITE_BOX)


class AuxUsage(StrEnum):
    """How a human target uses its auxiliary (the build report's counts)."""

    CALLS = "calls"  # black-box: at least one call of the auxiliary
    REFERENCES_ONLY = "references_only"  # names it, never calls it
    NOT_USED = "not_used"


def auxiliary_usage(code: str, auxiliary_name: str) -> AuxUsage:
    """Classify ``code`` (a target function, or a program) by its use of ``auxiliary_name`` anywhere in it."""
    calls, references = count_uses(ast.parse(code), auxiliary_name)
    if calls:
        return AuxUsage.CALLS
    if references:
        return AuxUsage.REFERENCES_ONLY
    return AuxUsage.NOT_USED
