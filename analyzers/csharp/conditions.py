"""``#if`` / ``#elif`` conditions of the C# preprocessor: symbols, ``true``/``false``, ``!``, ``==``, ``!=``,
``&&``, ``||`` and parentheses, evaluated against the defines of the build."""

from __future__ import annotations

import re


class PreprocessError(ValueError):
    pass


_TOKEN = re.compile(r"\s*(?:(\|\||&&|==|!=|!|\(|\))|([A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*))")


def evaluate(expr: str, defines: set[str] | frozenset[str]) -> bool:
    """A ``#if``/``#elif`` condition; raises ``PreprocessError`` for what the compiler would reject."""
    expr = strip_comment(expr).strip()
    toks: list[str] = []
    at = 0
    while at < len(expr):
        m = _TOKEN.match(expr, at)
        if m is None or m.end() == at:
            if expr[at:].strip() == "":
                break
            raise PreprocessError(f"cannot read {expr!r} at column {at + 1}")
        toks.append(m.group(1) or m.group(2))
        at = m.end()
    if not toks:
        raise PreprocessError("empty condition")
    pos = 0

    def peek() -> str | None:
        return toks[pos] if pos < len(toks) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(toks):
            raise PreprocessError(f"condition {expr!r} ends early")
        pos += 1
        return toks[pos - 1]

    def primary() -> bool:
        t = take()
        if t == "(":
            v = disjunction()
            if take() != ")":
                raise PreprocessError(f"unbalanced parenthesis in {expr!r}")
            return v
        if t == "!":
            return not primary()
        if t == "true":
            return True
        if t == "false":
            return False
        if t in ("||", "&&", "==", "!=", ")"):
            raise PreprocessError(f"unexpected {t!r} in {expr!r}")
        return t in defines

    def equality() -> bool:
        v = primary()
        while peek() in ("==", "!="):
            op = take()
            w = primary()
            v = (v == w) if op == "==" else (v != w)
        return v

    def conjunction() -> bool:
        v = equality()
        while peek() == "&&":
            take()
            w = equality()  # no short circuit: the whole expression must be well formed
            v = v and w
        return v

    def disjunction() -> bool:
        v = conjunction()
        while peek() == "||":
            take()
            w = conjunction()
            v = v or w
        return v

    value = disjunction()
    if pos != len(toks):
        raise PreprocessError(f"unexpected {toks[pos]!r} in {expr!r}")
    return value


def strip_comment(s: str) -> str:
    i = s.find("//")
    return s if i < 0 else s[:i]
