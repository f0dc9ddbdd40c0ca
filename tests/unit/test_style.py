"""Black-box / reference / white-box classification of target implementations."""

from __future__ import annotations

import pytest

from benchsmith.evaluate.humanext.style import Style, classify_source

PREFIX = "def aux(xs):\n    return sorted(xs)\n\n\ndef target(items):\n"


@pytest.mark.parametrize(
    ("body", "style"),
    [
        ("    return aux(items)[0]\n", Style.BLACK_BOX),
        ("    return [aux(x) for x in items]\n", Style.BLACK_BOX),
        ("    f = lambda: aux(items)\n    return f()\n", Style.BLACK_BOX),
        ("    return max(items, key=aux)\n", Style.REFERENCE),
        ("    return list(map(aux, items))\n", Style.REFERENCE),
        ("    return sorted(items)[0]\n", Style.WHITE_BOX),
        ("    def aux(v):\n        return v\n    return aux(items)\n", Style.WHITE_BOX),  # shadowed
        ("    aux = sorted\n    return aux(items)\n", Style.WHITE_BOX),
        ("    return items.aux(1)\n", Style.WHITE_BOX),  # attribute, not the auxiliary
        ("    return aux(\n", Style.UNPARSEABLE),
    ],
)
def test_classification(body, style):
    assert classify_source(PREFIX + body, "target", "aux").style is style


def test_counts_and_last_definition_wins():
    src = PREFIX + "    return aux(items) + aux(items[::-1]) + [aux]\n"
    res = classify_source(src, "target", "aux")
    assert (res.style, res.calls, res.references) == (Style.BLACK_BOX, 2, 1)
    redefined = src + "\n\ndef target(items):\n    return items\n"
    assert classify_source(redefined, "target", "aux").style is Style.WHITE_BOX


def test_parameter_named_like_the_auxiliary_is_not_a_call_of_it():
    assert classify_source("def target(aux):\n    return aux(1)\n", "target", "aux").style is Style.WHITE_BOX


def test_missing_target_is_unparseable():
    assert classify_source("x = 1\n", "target", "aux").style is Style.UNPARSEABLE


def test_calls_in_other_functions_do_not_count():
    src = PREFIX + "    return items\n\n\ndef other():\n    return aux([1])\n"
    assert classify_source(src, "target", "aux").style is Style.WHITE_BOX
