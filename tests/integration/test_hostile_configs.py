"""Hostile repository configuration (tests/hostile/configs.py) through the real CLI, one build per language: each
case's configuration file is recorded with its exact reason, nothing outside a repository is read or written, and
every case keeps the examples of its normal code, as the control of its language does.  Plus the attack of issue 22
itself, unconfined: a TargetFramework that split mcs's response file no longer writes outside the repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.analyzers.csharp.diagnostics import Compiler
from benchsmith.repobuild.build import unique_names
from benchsmith.files import snapshot
from benchsmith.records import Reason, RepoSpec
from tests.hostile import SECRET, make_csharp_control, tree_digest
from tests.hostile.builds import cli, read
from tests.hostile.configs import DOC_OPTION, make_config_suite

_TOOL_FOR = {"csharp": "mcs", "typescript": "node", "go": "go"}


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    root = tmp_path_factory.mktemp("configs")
    outside = root / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text(SECRET)
    cases = make_config_suite(root / "repos", outside)
    before = tree_digest(root)
    outs: dict[str, Path] = {}
    names: dict[str, str] = {}
    for lang, tool in _TOOL_FOR.items():
        if shutil.which(tool) is None:
            continue
        sources = [c.source for c in cases if c.language == lang]
        out = tmp_path_factory.mktemp(f"configs-out-{lang}")
        args = ["--lang", lang, "--output", str(out), "--workers", "2"]
        for s in sources:
            args += ["--repo", s]
        cli(*args, timeout=900)  # generous: the machine is shared; each build takes seconds when idle
        outs[lang] = out / lang
        names.update(zip(sources, unique_names([RepoSpec.parse(s) for s in sources])))
    return root, cases, outs, names, before


def _built(configs):
    _root, cases, outs, names, _before = configs
    return [(c, outs[c.language], names[c.source]) for c in cases if c.language in outs]


@pytest.mark.parametrize("language", sorted(_TOOL_FOR))
def test_each_language_was_built(configs, language):
    _root, cases, outs, _names, _before = configs
    if language not in outs:
        pytest.skip(f"{_TOOL_FOR[language]} not on PATH: the {language} configuration cases were not built")
    hostile = [c for c in cases if c.language == language and c.items]
    assert len(hostile) >= 2 and any(c.language == language and not c.items for c in cases)


def test_config_suite_is_large_enough(configs):
    _root, cases, _outs, _names, _before = configs
    assert len([c for c in cases if c.items]) >= 8


def test_each_configuration_file_has_its_exact_reason(configs):
    for case, out, name in _built(configs):
        by_item: dict[str, set[str]] = {}
        for e in read(out / "excluded.jsonl"):
            if e["repository"] == name:
                by_item.setdefault(e["item_id"], set()).add(e["reason"])
        for item, reason in case.items.items():
            assert by_item.get(item) == {str(reason)}, f"{case.name}: {item!r} -> {by_item.get(item)}, expected " \
                                                      f"{reason}; recorded: {sorted(by_item)}"
        bad = {r for rs in by_item.values() for r in rs} & {str(r) for r in case.forbidden_reasons}
        assert not bad, f"{case.name}: {bad}"
        if not case.items:  # a control: its configuration is fine
            assert not any(r.startswith("config_") for rs in by_item.values() for r in rs), (case.name, by_item)


def test_nothing_outside_is_read_or_written(configs):
    root, cases, outs, _names, before = configs
    for case in cases:
        for marker in case.markers:
            assert not marker.exists(), f"{case.name}: {marker} was written"
    assert tree_digest(root) == before, "a file in or next to the repositories changed"
    for out in outs.values():
        for path in out.rglob("*"):
            if path.is_file():
                assert SECRET.strip() not in path.read_text(encoding="utf-8", errors="replace"), \
                    f"{path} holds text from outside the repositories"


def test_every_case_keeps_the_examples_of_its_code(configs):
    for case, out, name in _built(configs):
        found: dict[str, int] = {}
        for ex in read(out / "line_completion.jsonl"):
            if ex["metadata"]["repository"] == name:
                found[ex["metadata"]["file"]] = found.get(ex["metadata"]["file"], 0) + 1
        for file, at_least in case.examples_from.items():
            assert found.get(file, 0) >= at_least, f"{case.name}: {file} gave {found.get(file, 0)} examples " \
                                                  f"(expected >= {at_least}; {found})"


@pytest.mark.skipif(shutil.which("mcs") is None, reason="mcs not on PATH")
def test_framework_option_cannot_write_outside_when_unconfined(tmp_path):
    """The issue's attack as it was run: mcs unconfined, its working directory the analysed tree, and a
    TargetFramework whose ``-doc:`` names a file two levels up.  Before, X.XML appeared there holding the
    repository's documentation; now the value is refused and recorded, and the repository keeps its reference."""
    repo = Path(make_csharp_control(tmp_path).source)
    (repo / "App.csproj").write_text(f'<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup><TargetFramework>{DOC_OPTION}'
                                     "</TargetFramework></PropertyGroup></Project>")
    (tmp_path / "OUTSIDE").mkdir()
    analyzer = get_analyzer("csharp", AnalyzerOptions(confine=False))
    analyzer.compiler = Compiler.MCS  # the tool of the report (dotnet, where installed, would be chosen first)
    snap = snapshot(repo, analyzer.extensions, tmp_path / "snap", repo_name="cs_control")
    snap.configs = analyzer.read_configs(repo)
    result = analyzer.analyze(snap, tmp_path / "work")  # mcs runs in work/original: ../../OUTSIDE is tmp_path's
    assert not (tmp_path / "OUTSIDE" / "X.XML").exists() and list((tmp_path / "OUTSIDE").iterdir()) == []
    assert [(e.item_id, e.reason) for e in result.exclusions] == [("cs_control/App.csproj",
                                                                      Reason.CONFIG_VALUE_REJECTED)]
    assert "-doc:../../OUTSIDE/X.XML" in result.exclusions[0].detail
    assert any(r.file == "App.cs" for r in result.refs)
