"""Perturbations of the auxiliary function, applied to its source text (never an ``ast.unparse`` round trip).

* ``renamed`` (paper): the function takes another HumanEval function's name; the ``def``, every recursive call
  in its body, the doctest lines of its docstring and every use in the target's reference are renamed together
  (placeholders make that exact), so the reference still passes.
* ``no_docstring`` (paper): the docstring is removed.
* ``renamed_locals``: every local variable (not the parameters, which are the interface the docstring and callers
  name) gets a neutral fresh name, consistently.
* ``docstring_as_comments``: the docstring's text becomes ``#`` comments at the body's indentation.
* ``dead_code``: one unreachable / unused statement is inserted between two top-level statements of the body.

Every rename is checked against the syntax tree (:func:`render.rename_is_exact`); a name that cannot be renamed
exactly is left alone and the record says so.
"""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from benchsmith.evaluate.humanext.records import Perturbation

from .render import FunctionTemplate, comment_block, identifiers, rename_is_exact
from .sources import Pair

RANDOM_PERTURBATIONS = frozenset({Perturbation.RENAMED, Perturbation.DEAD_CODE})


@dataclass(frozen=True)
class AuxiliaryView:
    """The auxiliary as it appears in one prompt, and how the target's reference must be rendered with it."""

    name: str
    code: str  # the whole function as it appears in the prompt
    signature: str  # def header + (perturbed) docstring + "\n": stage-1 prompt of step_by_step
    body: str  # the (perturbed) body: the reference completion of the stage-1 prompt
    docstring_text: str | None
    target_mapping: dict[str, str] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


class PerturbationError(ValueError):
    pass


def forbidden_names(pair: Pair) -> set[str]:
    """Identifiers a fresh name must avoid: anything in the auxiliary, target, tests or imports."""
    out = identifiers(pair.auxiliary.code()) | identifiers(pair.target.code()) | identifiers(pair.tests)
    for line in pair.imports:
        out |= identifiers(line)
    return out


def perturb(pair: Pair, kind: Perturbation, rng: random.Random, rename_pool: Sequence[str],
            sample: int = 0) -> AuxiliaryView:
    """The auxiliary under ``kind``.  Random perturbations shuffle all their choices with ``rng`` and take the
    ``sample``-th, so samples drawn with the same ``rng`` seed differ from each other while choices last."""
    aux = pair.auxiliary
    if kind is Perturbation.NONE:
        return _view(aux)
    if kind is Perturbation.NO_DOCSTRING:
        return _view(aux, block=None, info={"noop": aux.docstring_block is None})
    if kind is Perturbation.DOCSTRING_AS_COMMENTS:
        if aux.docstring_text is None:
            return _view(aux, info={"noop": True})
        return _view(aux, block=comment_block(aux.docstring_text, aux.body_indent), info={"noop": False})
    if kind is Perturbation.RENAMED:
        return _renamed(pair, rng, rename_pool, sample)
    if kind is Perturbation.RENAMED_LOCALS:
        return _renamed_locals(pair)
    if kind is Perturbation.DEAD_CODE:
        return _dead_code(pair, rng, sample)
    raise PerturbationError(f"unknown perturbation {kind}")  # pragma: no cover - enum is closed


def _view(aux: FunctionTemplate, mapping: dict[str, str] | None = None, block: object = "keep",
          body: str | None = None, target_mapping: dict[str, str] | None = None,
          info: dict[str, Any] | None = None, docstring_text: str | None | object = "keep") -> AuxiliaryView:
    mapping = mapping or {}
    docstring_block = aux.docstring_block if block == "keep" else block
    signature = aux.signature(mapping, docstring_block)
    body = aux.body(mapping) if body is None else body
    text = aux.docstring_text if docstring_text == "keep" else docstring_text
    if block is None:
        text = None
    return AuxiliaryView(
        name=mapping.get(aux.name, aux.name),
        code=(signature + body).rstrip("\n"),
        signature=signature,
        body=body,
        docstring_text=text,  # type: ignore[arg-type]
        target_mapping=target_mapping or {},
        info=info or {},
    )


def _renamed(pair: Pair, rng: random.Random, rename_pool: Sequence[str], sample: int) -> AuxiliaryView:
    aux, old = pair.auxiliary, pair.auxiliary.name
    taken = forbidden_names(pair)
    candidates = sorted({n for n in rename_pool if n != old and n not in taken and n.isidentifier()})
    if not candidates:
        raise PerturbationError(f"{pair.pair_id}: no HumanEval function name is free to rename {old!r} to")
    rng.shuffle(candidates)
    new = candidates[sample % len(candidates)]
    mapping = {old: new}
    if not rename_is_exact(aux, mapping) or not rename_is_exact(pair.target, mapping):
        raise PerturbationError(f"{pair.pair_id}: {old!r} has occurrences the template does not mark; "
                                "it cannot be renamed exactly")
    block = aux.docstring_block
    text = aux.docstring_text
    if block is not None:
        block = _rename_in_doctests(block, old, new)
        text = _rename_in_doctests(text or "", old, new)
    return _view(aux, mapping, block=block, target_mapping=mapping, docstring_text=text,
                 info={"old_name": old, "new_name": new})


def _rename_in_doctests(text: str, old: str, new: str) -> str:
    """Rename ``old`` on doctest lines (``>>> old(...)``) only; prose keeps its words."""
    pattern = re.compile(r"\b" + re.escape(old) + r"\b")
    return "\n".join(pattern.sub(new, ln) if ln.lstrip().startswith(">>>") else ln for ln in text.split("\n"))


def local_names(aux: FunctionTemplate) -> list[str]:
    """Names bound inside the function other than its parameters and its own name, in order of appearance."""
    fn = ast.parse(aux.render_template()).body[0]
    assert isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    declared_outer: set[str] = set()
    found: dict[str, tuple[int, int]] = {}

    def note(name: str, node: ast.AST) -> None:
        pos = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if name not in found or pos < found[name]:
            found[name] = pos

    for node in ast.walk(fn):
        if node is fn:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            note(node.id, node)
        elif isinstance(node, ast.arg):
            note(node.arg, node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            note(node.name, node)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            note(node.name, node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared_outer.update(node.names)
    # a parameter of a nested function shadows nothing we rename when it equals an outer parameter
    names = [n for n in found if n not in params and n != aux.name and n not in declared_outer]
    return sorted(names, key=lambda n: found[n])


def _renamed_locals(pair: Pair) -> AuxiliaryView:
    aux = pair.auxiliary
    taken = forbidden_names(pair)
    mapping: dict[str, str] = {}
    skipped: list[str] = []
    counter = 0
    for name in local_names(aux):
        if name not in aux.placeholders:
            skipped.append(name)
            continue
        while f"var_{counter}" in taken:
            counter += 1
        trial = {**mapping, name: f"var_{counter}"}
        if rename_is_exact(aux, trial):
            mapping = trial
            counter += 1
        else:
            skipped.append(name)
    return _view(aux, mapping, info={"renamed": mapping, "not_renamed": skipped, "noop": not mapping})


_DEAD_SNIPPETS = (
    "{i}if False:\n{i}{u}{v} = 0",
    "{i}{v} = None",
    "{i}for {v} in []:\n{i}{u}pass",
    "{i}while False:\n{i}{u}{v} = 1",
)


def _dead_code(pair: Pair, rng: random.Random, sample: int) -> AuxiliaryView:
    aux = pair.auxiliary
    rendered = aux.render_template()
    fn = ast.parse(rendered).body[0]
    assert isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    starts = []
    for stmt in fn.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        starts.append(first - 1 - aux.header_lines)  # index into the body's lines
    body_lines = aux.body().rstrip("\n").split("\n")
    starts.append(len(body_lines))  # after the last statement
    taken = forbidden_names(pair)
    var = "unused"
    n = 0
    while var in taken:
        n += 1
        var = f"unused_{n}"
    indent = aux.body_indent
    unit = "\t" if indent.startswith("\t") else "    "
    choices = [(w, a) for w in range(len(_DEAD_SNIPPETS)) for a in range(len(starts))]
    rng.shuffle(choices)
    which, at = choices[sample % len(choices)]
    snippet = _DEAD_SNIPPETS[which].format(i=indent, u=unit, v=var)
    line = starts[at]
    new_body = "\n".join(body_lines[:line] + snippet.split("\n") + body_lines[line:]) + "\n"
    return _view(aux, body=new_body, info={"snippet": which, "statement_index": at, "variable": var})
