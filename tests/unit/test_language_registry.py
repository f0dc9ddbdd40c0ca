"""Every registered language is complete: a toolchain Dockerfile that `make images` builds, a tree-sitter grammar
declared as a core dependency, fixtures, a real-code integration test, and a place in the CLI.  Adding a language
(docs/adding-a-language.md) means satisfying this file without editing anything outside the language's own files."""

from __future__ import annotations

import argparse
import importlib
import re
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from benchsmith.analyzers import Analyzer, registry
from benchsmith.containers import IMAGES
from benchsmith.runner import repo_root

ROOT = repo_root()
TESTS = Path(__file__).resolve().parents[1]
LANGUAGES = sorted(registry())


def test_the_registry_finds_every_language_module():
    assert {"python", "java", "typescript", "csharp", "go", "javascript"} <= set(LANGUAGES)
    for name, cls in registry().items():
        assert issubclass(cls, Analyzer) and cls.language == name


@pytest.mark.parametrize("language", LANGUAGES)
def test_class_attributes_are_well_formed(language):
    cls = registry()[language]
    assert cls.extensions and all(e.startswith(".") for e in cls.extensions), cls.extensions
    assert cls.comment_prefix.strip()
    assert cls.statement_terminators is None or isinstance(cls.statement_terminators, frozenset)
    assert isinstance(cls.line_end_terminators, frozenset) and isinstance(cls.statement_containers, frozenset)
    assert callable(getattr(cls, "analyze")) and not getattr(cls.analyze, "__isabstractmethod__", False)


@pytest.mark.parametrize("language", LANGUAGES)
def test_dockerfile_exists_and_is_an_image(language):
    cls = registry()[language]
    assert cls.dockerfile, f"{cls.__name__}.dockerfile is empty"
    assert (ROOT / "containers" / cls.dockerfile).is_file(), cls.dockerfile
    assert cls.dockerfile in IMAGES.values(), f"`make images` would not build {cls.dockerfile}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_grammar_loads_and_is_a_core_dependency(language):
    cls = registry()[language]
    importlib.import_module(cls.grammar_module)
    assert cls.ts_language() is not None
    for ext in cls.extensions:
        assert cls.ts_language_for(f"x{ext}") is not None
        assert cls.parser_for(f"x{ext}").parse(b"\n").root_node is not None
    dists = packages_distributions().get(cls.grammar_module, [])
    assert dists, f"{cls.grammar_module} comes from no installed distribution"
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    declared = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].strip().lower().replace("_", "-") for d in deps}
    assert {d.lower().replace("_", "-") for d in dists} & declared, f"add {dists[0]} to pyproject's dependencies"


@pytest.mark.parametrize("language", LANGUAGES)
def test_fixtures_hold_source_files_the_grammar_parses(language):
    cls = registry()[language]
    fixtures = TESTS / "fixtures" / language
    assert fixtures.is_dir(), f"tests/fixtures/{language}/ is missing"
    sources = sorted(p for p in fixtures.rglob("*") if p.is_file() and p.name.endswith(cls.extensions))
    assert sources, f"tests/fixtures/{language}/ has no {'/'.join(cls.extensions)} file"
    # fixtures also hold deliberately broken files; most must parse, or the grammar is the wrong one
    clean = [p for p in sources
             if not cls.parser_for(p.name).parse(p.read_bytes()).root_node.has_error]
    assert len(clean) >= max(1, len(sources) // 2), (language, len(clean), len(sources))


@pytest.mark.parametrize("language", LANGUAGES)
def test_real_code_integration_test_exists(language):
    path = TESTS / "integration" / f"test_{language}_real.py"
    assert path.is_file(), f"{path.relative_to(TESTS.parent)} is missing"
    assert re.search(r"^def test_\w+", path.read_text(encoding="utf-8"), re.M)


def test_the_cli_offers_every_language():
    from benchsmith.builders.cceval import command as cli

    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    for language in LANGUAGES:
        args = parser.parse_args(["--lang", language, "--output", "out"])
        assert args.lang == language


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_language_recipe_is_complete(language):
    """What the builders read off a language (docs/adding-a-language.md, "The recipe"): a language that left one
    out would silently get weaker screens or cuts, so each part must be there and name what its grammar has."""
    from benchsmith.analyzers.base import Boundary
    from benchsmith.records import CursorPlace, ReferenceKind

    cls = registry()[language]
    assert cls.reference_kinds and all(isinstance(k, ReferenceKind) for k in cls.reference_kinds)
    start = re.compile(cls.import_pattern)
    assert cls.import_pattern and not start.match("x = 1") and not start.match("")
    grammar = cls.ts_language()
    node_types = set(cls.enclosing_ends) | (set(cls.statement_terminators or ())) | set(cls.line_end_terminators)
    unknown = sorted(t for t in node_types if not grammar.id_for_node_kind(t, True) and
                     not grammar.id_for_node_kind(t, False))
    assert not unknown, f"{language}: node types its grammar does not have: {unknown}"
    rule = cls.released_cursor
    assert isinstance(rule.boundary, Boundary)
    assert all(isinstance(p, CursorPlace) and w >= 0 for p, w in rule.weights.items())
