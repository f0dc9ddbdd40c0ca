"""Scorable by construction: the filter that drops groundtruths the scorers can never give full marks, and the
build's own self-check in stats.json."""

from __future__ import annotations

import json

import pytest

from benchsmith.builders.cceval import scorability
from benchsmith.builders.cceval.examples import ExampleCutter
from benchsmith.builders.cceval.filters import ExampleFilterConfig, ScorableGroundtruth, default_filters
from benchsmith.analyzers import get_analyzer
from benchsmith.evaluate.cceval.scoring import Mode
from benchsmith.files import SourceFile
from benchsmith.pipeline import DropLedger, chain
from benchsmith.records import CrossFileRef, Language, Reason
from benchsmith.builders.cceval.records import CompletionExample, ExampleMetadata

PAD = "".join(f"// line {i}\n" for i in range(6))
PY_PAD = "".join(f"# line {i}\n" for i in range(6))


def example(lang: str, prompt: str, groundtruth: str) -> CompletionExample:
    return CompletionExample(prompt, groundtruth, "\n", ExampleMetadata(
        task_id=f"t/{lang}/{len(prompt)}", repository="r", file="f", context_start_lineno=0,
        groundtruth_start_lineno=prompt.count("\n"), right_context_start_lineno=prompt.count("\n") + 1,
        language=lang, symbol=groundtruth[:3]))


@pytest.mark.parametrize(
    "lang, prompt, groundtruth, mode",
    [
        # the released scorer cuts at the first `{` character, inside the interpolated string
        ("csharp", PAD + "class A { void M() {\n  Exceptions.", 'RaiseTypeError($"Cannot convert {name} here");',
         Mode.COMPAT),
        ("typescript", PAD + "function f() {\n  lib.", "report(`Invalid literal value, expected ${want}`);",
         Mode.COMPAT),
        ("java", PAD + "class A { void m() {\n  log.", 'info("a;b");', Mode.COMPAT),
        # the default scorer cannot delimit a statement whose bracket opened before the cursor: first line only
        ("python", PY_PAD + "revision = (\n    Revision.", "query.filter(\n        Page.name == name\n    )",
         Mode.DEFAULT),
    ],
)
def test_unscorable_groundtruth_is_dropped_with_its_reason(lang, prompt, groundtruth, mode):
    bad = scorability.unscorable(prompt, groundtruth, Language(lang))
    assert bad is not None and bad.mode is mode
    counter = DropLedger()
    kept = list(ScorableGroundtruth(counter)([example(lang, prompt, groundtruth)]))
    assert kept == []
    assert dict(counter.dropped) == {str(Reason.UNSCORABLE_GROUNDTRUTH): 1}
    assert mode.value in counter.exclusions[0].detail


@pytest.mark.parametrize(
    "lang, prompt, groundtruth",
    [
        ("csharp", PAD + "class A { void M() {\n  Exceptions.", 'RaiseTypeError("Cannot convert");'),
        ("typescript", PAD + "function f() {\n  lib.", "report(`Invalid literal value`);"),
        ("java", PAD + "class A { void m() {\n  if (cfg.", "enabled()) {"),
        ("python", PY_PAD + "x = tokenizer.decode(generator.", "sequence_actual[:, -max_stop_string:])[0]"),
        ("javascript", PAD + "function f() {\n  return lib.", "map(x => g(x))"),
        ("go", "package p\n" + PAD + "func f() {\n\tx := pkg.", "New(a,\n\t\tb)"),
    ],
)
def test_scorable_groundtruth_is_kept(lang, prompt, groundtruth):
    scores = scorability.self_scores(prompt, groundtruth, Language(lang))
    assert [s.mode for s in scores] == list(scorability.modes_for(Language(lang)))
    assert all(s.ok for s in scores), scores
    assert list(ScorableGroundtruth()([example(lang, prompt, groundtruth)]))


def test_compat_mode_only_for_the_released_scorers_languages():
    assert scorability.modes_for(Language.GO) == (Mode.DEFAULT,)
    assert scorability.modes_for(Language.CSHARP) == (Mode.COMPAT, Mode.DEFAULT)
    figures = scorability.self_consistency([{"prompt": "package p\nfunc f() {\n\tx := pkg.", "groundtruth": "New(a)",
                                             "metadata": {"task_id": "g"}}], Language.GO)
    assert figures["compat"] is None
    assert figures["default"] == {"examples": 1, "em": 100.0, "es": 100.0, "violations": 0}


def test_self_consistency_counts_violations():
    recs = [{"prompt": PAD + "x = lib.", "groundtruth": 'f("a;b");', "metadata": {"task_id": "bad"}},
            {"prompt": PAD + "x = lib.", "groundtruth": 'f("ab");', "metadata": {"task_id": "good"}}]
    figures = scorability.self_consistency(recs, Language.JAVA)
    assert figures["compat"]["violations"] == 1 and figures["compat"]["violating"] == ["bad"]
    assert figures["compat"]["em"] == 50.0
    assert figures["default"]["violations"] == 0


def test_filter_runs_before_dedup_so_a_scorable_twin_survives():
    steps = default_filters(ExampleFilterConfig(min_tokens=1, min_prompt_lines=1), DropLedger())
    names = [type(s).__name__ for s in steps]
    assert names.index("ScorableGroundtruth") < names.index("DuplicateGroundtruth")
    assert "ScorableGroundtruth" not in [type(s).__name__ for s in
                                         default_filters(ExampleFilterConfig(scorable=False), DropLedger())]


def test_cutter_and_filters_keep_only_scorable_examples_for_every_language():
    """Many cursors in one file per language, cut and filtered as the build does: whatever is kept scores full
    marks in both modes, and what is dropped as unscorable really is."""
    sources = {
        "typescript": ("f.ts", "import { lib } from './lib';\n" + PAD +
                       "export function f(want: string) {\n  const m = lib.fmt(`expected ${want} here`);\n"
                       "  const n = lib.parse(want)\n  lib.report(m, n);\n  return lib.done(m)\n}\n"),
        "csharp": ("f.cs", "using Lib;\n" + PAD + "[Lib.Marker(\"x\")]\npublic class A {\n  void M(string name) {\n"
                   "    Exceptions.RaiseTypeError($\"Cannot convert {name} here\");\n"
                   "    Exceptions.SetError(Exceptions.TypeError, name);\n  }\n}\n"),
        "python": ("f.py", "import lib\n" + PY_PAD + "revision = (\n    lib.Revision.query.filter(\n"
                   "        lib.Page.name == name\n    )\n    .first()\n)\n"
                   "old = lib.tok.decode(lib.gen.seq[:, -2:])[0]\n"),
    }
    for lang, (path, text) in sources.items():
        analyzer = get_analyzer(lang)
        refs = []
        for line_no, line in enumerate(text.split("\n")):
            for col in range(len(line)):
                if line.startswith("lib.", col) or line.startswith("Exceptions.", col):
                    dot = line.index(".", col)
                    name = line[dot + 1:].split("(")[0].split(".")[0].split(" ")[0]
                    refs.append(CrossFileRef(path, line_no, dot + 1, name, "lib", "lib" + path[1:]))
        counter = DropLedger()
        cutter = ExampleCutter(analyzer, {path: SourceFile(path, text)}, "r", counter=counter)
        kept = list(chain(refs, cutter, *default_filters(ExampleFilterConfig(min_tokens=1, min_prompt_lines=1),
                                                         counter)))
        assert kept, lang
        for ex in kept:
            assert all(s.ok for s in scorability.self_scores(ex.prompt, ex.groundtruth, Language(lang))), ex
        dropped = [e for e in counter.exclusions if e.reason is Reason.UNSCORABLE_GROUNDTRUTH]
        assert dropped, (lang, [e.groundtruth for e in kept])


def test_build_writes_self_consistency_to_stats(tmp_path):
    from benchsmith.cli import main

    repos = []
    for i in range(2):
        repo = tmp_path / f"repo{i}"
        repo.mkdir()
        (repo / "core.py").write_text("class Engine:\n    def start(self, x):\n        return x\n\n"
                                      "    def stop(self, x, y):\n        return y\n")
        (repo / "use.py").write_text('from core import Engine\n\n\ndef run(e: Engine):\n    """Start."""\n'
                                     f"    a = {i}\n    b = 2\n    e = Engine()\n    r = e.start(a + b)\n"
                                     "    return e.stop(\n        r,\n        a,\n    )\n")
        repos += ["--repo", str(repo)]
    out = tmp_path / "out"
    argv = ["build", "cceval", "--lang", "python", *repos, "--output", str(out), "--retrievers", "none",
            "--workers", "1", "--quiet", "--no-card", "--min-prompt-lines", "1"]
    assert main(argv) == 0
    stats_path = out / "python" / "stats.json"
    stats = json.loads(stats_path.read_text())
    sc = stats["self_consistency"]
    # summed over the shards of both repositories
    assert sc["compat"]["examples"] == sc["default"]["examples"] == stats["examples"] >= 4
    assert sc["compat"]["violations"] == 0 and sc["default"]["violations"] == 0
    assert sc["compat"]["em"] == 100.0 and sc["default"]["es"] == 100.0
    first = stats_path.read_bytes()
    assert main(argv) == 0  # resumed: the shards' sums are reused, the figures are the same bytes
    assert stats_path.read_bytes() == first
    shard_stats = [json.loads(p.read_text()) for p in sorted((out / "python" / ".shards").glob("*/stats.json"))]
    assert len(shard_stats) == 2
    assert sum(s["self_consistency"]["default"]["examples"] for s in shard_stats) == stats["examples"]


def test_unscorable_example_is_counted_by_the_build(tmp_path):
    """Through pylint and the CLI: a multi-line call inside a bracket opened before the cursor is dropped as
    unscorable; kept with --keep-unscorable, the build's self-check counts it as a violation."""
    from benchsmith.cli import main

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "core.py").write_text("def make(n):\n    return n\n\n\ndef other(n):\n    return n\n")
    (repo / "use.py").write_text("import core\n\nA = 1\nB = 2\nC = 3\nD = 4\n\n"
                                 "value = (\n    core.make(\n        A + B,\n    )\n    .real\n)\n")
    results = {}
    for flag in ([], ["--keep-unscorable"]):
        out = tmp_path / ("keep" if flag else "drop")
        assert main(["build", "cceval", "--lang", "python", "--repo", str(repo), "--output", str(out),
                     "--retrievers", "none", "--workers", "1", "--quiet", "--no-card", *flag]) == 0
        results[bool(flag)] = json.loads((out / "python" / "stats.json").read_text())
    dropped, kept = results[False], results[True]
    assert dropped["dropped"].get("unscorable_groundtruth") == 1
    assert dropped["self_consistency"]["default"]["violations"] == 0
    assert kept["examples"] == dropped["examples"] + 1
    assert kept["self_consistency"]["default"]["violations"] == 1
    assert kept["self_consistency"]["default"]["violating"] == ["project_cc_python/repo/use.py:9:10"]
    assert kept["self_consistency"]["compat"]["violations"] == 0


def test_builder_and_default_scorer_end_statements_with_one_rule_set():
    from benchsmith.analyzers import registry
    from benchsmith.evaluate.cceval import default

    for name, cls in registry().items():
        assert default.rules(Language(name)).statement_parents == cls.statement_parents(), name
    assert "switch_section" in registry()["csharp"].statement_parents()
    assert registry()["go"].statement_parents() == frozenset()  # Go ends statements at line ends instead


def test_released_cursor_keeps_what_only_the_released_scorer_cannot_score(tmp_path):
    """Through tsc and the CLI.  The released groundtruth of ``return [StatusCodes.ok, { p: f(x) }];`` runs to the
    line's ``;``, and the released scorer cuts a prediction at its first ``{``: the released benchmark holds such
    examples, so ``--cursor released`` keeps it, declared in ``metadata.unscorable_modes`` and counted apart from
    violations; ``--cursor name`` ends the groundtruth at the ``{`` token, which both scorers give full marks."""
    from benchsmith.cli import main
    from tests.invariants import check_self_consistency

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "status.ts").write_text("export const StatusCodes = { ok: 200, notFound: 404 };\n")
    (repo / "api.ts").write_text(
        "import { StatusCodes } from './status';\n\nexport function handler(player: number) {\n"
        "    const a = 1;\n    const b = 2;\n    const c = 3;\n    const d = a + b + c;\n"
        "    const record = {\n        first: StatusCodes.notFound,\n        second: d,\n    };\n"
        "    return [StatusCodes.ok, { player: player, total: record }];\n}\n")
    built = {}
    for rule in ("name", "released"):
        out = tmp_path / rule
        assert main(["build", "cceval", "--lang", "typescript", "--repo", str(repo), "--output", str(out),
                     "--retrievers", "none", "--workers", "1", "--quiet", "--no-card", "--screens", "none",
                     "--cursor", rule]) == 0
        examples = [json.loads(x) for x in (out / "typescript" / "line_completion.jsonl").read_text().splitlines()]
        built[rule] = ({e["metadata"]["groundtruth_start_lineno"]: e for e in examples},
                       json.loads((out / "typescript" / "stats.json").read_text()))
    name_examples, name_stats = built["name"]
    name_ex = name_examples[11]
    assert name_ex["groundtruth"] == "ok, {" and "unscorable_modes" not in name_ex["metadata"]
    assert "unscorable_as_released" not in name_stats["self_consistency"]["compat"]
    released_examples, released_stats = built["released"]
    released_ex = released_examples[11]
    assert released_ex["groundtruth"].endswith("total: record }];")
    # the object literal's member line runs on to the `};` line, which the released scorer cuts at its `}`
    assert released_examples[8]["groundtruth"].endswith("second: d,\n    };")
    for line in (8, 11):
        assert released_examples[line]["metadata"]["unscorable_modes"] == [Mode.COMPAT.value]
    compat = released_stats["self_consistency"]["compat"]
    assert compat["violations"] == 0 and compat["unscorable_as_released"] == 2 and compat["em"] == 0
    assert released_stats["self_consistency"]["default"] == {**released_stats["self_consistency"]["default"],
                                                             "violations": 0, "em": 100.0}
    assert released_stats["dropped"].get("unscorable_groundtruth") is None
    check_self_consistency(list(released_examples.values()))
    forged = json.loads(json.dumps(name_ex))
    forged["metadata"]["unscorable_modes"] = [Mode.COMPAT.value]  # a declaration the scores do not bear out
    with pytest.raises(AssertionError):
        check_self_consistency([forged])
