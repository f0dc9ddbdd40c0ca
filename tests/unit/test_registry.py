"""The one registry style (benchsmith/registry.py) and the registries built on it: languages, model backends,
commands, retrievers, images.  Entries are strings, so naming and validating never imports the code behind them."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import subprocess
import sys

import pytest

import benchsmith.analyzers as analyzers_pkg
from benchsmith.analyzers import Analyzer, analyzer_class, get_analyzer, languages
from benchsmith.languages import ANALYZERS
from benchsmith.records import Language
from benchsmith.registry import Registry, UnknownName


# ---- the mechanism --------------------------------------------------------------------------------------------


def test_entries_are_loaded_only_when_chosen_and_then_cached():
    reg: Registry = Registry("thing", {"dumps": "json:dumps", "path": "os.path", "nested": "os.path:join"},
                             aliases={"d": "dumps"})
    assert list(reg) == ["dumps", "path", "nested"] and len(reg) == 3 and reg["d"] == "json:dumps"
    import json
    import os.path

    assert reg.load("d") is json.dumps and reg.load("path") is os.path and reg.load("nested") is os.path.join
    assert reg.load("dumps") is reg.load("d")
    assert "d" in reg and "nope" not in reg and 3 not in reg


def test_unknown_names_say_what_exists_and_the_closest_match():
    reg: Registry = Registry("fruit", {"banana": "m:a", "apple": "m:b", "cherry": "m:c"})
    with pytest.raises(UnknownName) as err:
        reg.load("aple")
    assert str(err.value) == "unknown fruit 'aple'; choose from: apple, banana, cherry (did you mean 'apple'?)"
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)  # what the old lookups raised
    assert "did you mean" not in str(UnknownName("fruit", "zzzzzz", reg.names()))
    assert "choose from" in str(UnknownName("fruit", None, reg.names()))  # not a string: no crash
    with pytest.raises(KeyError):
        reg["grape"]
    assert reg.get("grape") is None  # Mapping.get works


def test_a_missing_module_is_an_import_error_not_an_unknown_name():
    reg: Registry = Registry("thing", {"ghost": "benchsmith_no_such_module_xyz:Thing"})
    assert "ghost" in reg  # declaring imports nothing
    with pytest.raises(ModuleNotFoundError):
        reg.load("ghost")


def test_bad_entries_are_refused():
    with pytest.raises(ValueError):
        Registry("thing", {"x": ""})
    with pytest.raises(UnknownName):
        Registry("thing", {"x": "m:a"}, aliases={"y": "z"})


def test_enum_members_follow_the_entries():
    from benchsmith.enums import StrEnum

    reg: Registry = Registry("colour", {"red": "m:a", "dark-blue": "m:b"})
    Colour = reg.enum("Colour", StrEnum, __name__)
    assert [m.value for m in Colour] == ["red", "dark-blue"] and Colour.DARK_BLUE == "dark-blue"
    assert f"{Colour.RED}" == "red"


# ---- languages ------------------------------------------------------------------------------------------------


def test_language_is_the_registry_and_parses_aliases():
    assert [m.value for m in Language] == ANALYZERS.names()
    assert Language.PYTHON == "python" and Language.CSHARP.value == "csharp" and Language("go") is Language.GO
    assert Language.parse(" C# ") is Language.CSHARP and Language.parse("py") is Language.PYTHON
    assert Language.parse("golang") is Language.GO and Language.parse("TS") is Language.TYPESCRIPT
    with pytest.raises(ValueError, match="unsupported language 'rust'; benchsmith knows python, java"):
        Language.parse("rust")
    assert pickle.loads(pickle.dumps(Language.JAVA)) is Language.JAVA


def test_language_and_the_cli_choices_import_no_analyzer():
    code = ("import sys\nfrom benchsmith.records import Language\nfrom benchsmith.analyzers import languages\n"
            "assert len(Language) == len(languages())\n"
            "loaded = [m for m in sys.modules if m.startswith('benchsmith.analyzers.') and m != "
            "'benchsmith.analyzers.base' and not m.startswith('benchsmith.analyzers._')]\n"
            "print(','.join(loaded))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"imported analyzer modules: {out}"


def test_every_entry_names_the_analyzer_of_its_language():
    for name in ANALYZERS:
        cls = analyzer_class(name)
        assert issubclass(cls, Analyzer) and cls.language == name
    assert analyzer_class("js") is analyzer_class("javascript")
    assert languages() == sorted(ANALYZERS)
    with pytest.raises(KeyError, match="did you mean 'python'"):
        get_analyzer("pyhton")


def _defined_analyzers():
    """Every concrete language an analyzer module or package defines (what the old discovery found)."""
    found = {}
    for info in pkgutil.iter_modules(analyzers_pkg.__path__):
        if info.name.startswith("_") or info.name in ("base", "common", "probes"):
            continue
        module = importlib.import_module(f"benchsmith.analyzers.{info.name}")
        for obj in vars(module).values():
            if (isinstance(obj, type) and issubclass(obj, Analyzer) and obj is not Analyzer
                    and getattr(obj, "language", None)
                    and (obj.__module__ == module.__name__ or obj.__module__.startswith(module.__name__ + "."))):
                found[obj.language] = obj
    return found


def test_no_analyzer_is_left_out_of_the_registry():
    # The registry is written by hand now: an analyzer module without its line would silently do nothing.
    defined = _defined_analyzers()
    assert set(defined) == set(ANALYZERS), set(defined) ^ set(ANALYZERS)
    for language, cls in defined.items():
        assert analyzer_class(language) is cls


# ---- the other registries -------------------------------------------------------------------------------------


def test_model_backends():
    from benchsmith.evaluate.generation import base as g

    assert g.backend_names() == ["hf", "openai", "vllm"]
    with pytest.raises(ValueError, match="did you mean 'vllm'"):
        g.backend_class("vlm")
    assert g.BACKENDS.note("transformers") == "pip install 'benchsmith[transformers]'"
    g.register_backend("ghost-test", "benchsmith_no_such_module_xyz", "Ghost", "pip install ghost")
    try:
        with pytest.raises(g.BackendUnavailable, match="install it with: pip install ghost"):
            g.backend_class("ghost-test")
    finally:
        g.BACKENDS._entries.pop("ghost-test")


def test_retrievers():
    from benchsmith.builders.cceval import retrieval as R
    from benchsmith.builders.cceval import retrievers

    assert [r.value for r in R.Retriever] == ["bm25", "jaccard", "dense"] == R.RETRIEVERS.names()
    assert R.parse_retriever("cosine_sim") is R.Retriever.DENSE
    assert R.RETRIEVERS.load("jaccard_sim") is retrievers.JaccardIndex
    for name in R.RETRIEVERS:
        cls = R.RETRIEVERS.load(name)
        assert callable(cls.for_repo) and isinstance(cls.tokenized_queries, bool)
    with pytest.raises(ValueError, match="unknown retriever 'bm52'.*did you mean 'bm25'"):
        R.parse_retriever("bm52")


def test_commands_are_the_cli():
    from benchsmith.cli import COMMANDS, build_parser

    parser = build_parser()
    for name in COMMANDS:
        assert COMMANDS.note(name)
        module = COMMANDS.load(name)
        assert callable(module.add_arguments) and callable(module.run)
    assert COMMANDS["screen"] == "benchsmith.builders.cceval.model_screen"
    args = parser.parse_args(["screen", "--input", "x"])
    assert args._run is COMMANDS.load("screen").run


def test_build_toolchain_backend_flag_and_its_old_spelling():
    from benchsmith.cli import build_parser
    from benchsmith.runner import ToolchainBackend

    base = ["build", "cceval", "--lang", "python", "--repo", "r", "--output", "o"]
    assert build_parser().parse_args(base).toolchain_backend is ToolchainBackend.LOCAL
    new = build_parser().parse_args([*base, "--toolchain-backend", "docker"])
    old = build_parser().parse_args([*base, "--backend", "podman"])
    assert new.toolchain_backend is ToolchainBackend.DOCKER and old.toolchain_backend is ToolchainBackend.PODMAN


def test_a_misspelt_command_or_choice_gets_a_suggestion(capsys):
    from benchsmith.cli import main

    for argv, expected in ((["buidl", "cceval"], "(did you mean 'build'?)"),
                           (["score", "cceeval"], "(did you mean 'cceval'?)"),
                           (["build", "cceval", "--lang", "pyton", "--repo", "r", "--output", "o"],
                            "(did you mean 'python'?)")):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert exit_.value.code == 2 and "invalid choice" in err and err.endswith(expected), err
    with pytest.raises(SystemExit):
        main(["build", "cceval", "--lang", "zzzzzz", "--repo", "r", "--output", "o"])
    assert "did you mean" not in capsys.readouterr().err
