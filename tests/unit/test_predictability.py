"""Predictability as classes of pattern (issue 25): analogies with a consistent substitution, delegation under the
enclosing name, the surprisal score and ``metadata.predictability``, on fixtures written for these tests."""

from __future__ import annotations

import json

from benchsmith.builders.cceval.predictability import AnalogyFinder, code_tokens, subwords, surprisal
from benchsmith.builders.cceval.screen_text import FileKnowledge
from benchsmith.builders.cceval.screens import (
    EarlierAnalogy,
    EnclosingEcho,
    KnownVocabulary,
    LowSurprisal,
    PredictabilityScore,
    ScreenName,
    judge_all,
    predictability,
)
from benchsmith.pipeline import DropLedger
from benchsmith.records import Reason
from benchsmith.builders.cceval.records import CompletionExample, ExampleMetadata


def _analogy(prompt: str, gt: str, language: str = "java"):
    return AnalogyFinder(FileKnowledge.of(prompt, language, gt)).find(code_tokens(gt, language))


def test_subwords_split_every_convention_the_same_way():
    assert subwords("setMaxZoomLevel") == ["set", "max", "zoom", "level"]
    assert subwords("$ZodULID") == ["zod", "ulid"]
    assert subwords("HTTP_STATUS_2") == ["http", "status", "2"]
    assert subwords('"/post/"') == ["post"]


SETTERS = """public class MapManager {
  public void setMaxZoom(MapView view, float value) {
    view.setMaxZoomLevel(value);
  }

  public void setMinZoom(MapView view, float value) {
    view."""


def test_a_sibling_setter_mirrors_the_one_above_with_the_enclosing_name_substituted():
    found = _analogy(SETTERS, "setMinZoomLevel(value);")
    assert found is not None and found.substitutions == (("setMaxZoomLevel", "setMinZoomLevel"),)
    assert found.line == 2
    verdict = EarlierAnalogy().judge(SETTERS, "setMinZoomLevel(value);", "java")
    assert verdict is not None and verdict.reason is Reason.PREDICTABLE_BY_ANALOGY
    # a name the neighbourhood does not give is no analogy, and neither is another argument nobody wrote
    assert _analogy(SETTERS, "setMinimumZoomLevel(value);") is None
    assert _analogy(SETTERS, "setMinZoomLevel(value, true);") is None


SWITCH = """void apply(Time t, String unit, int v) {
  switch (unit) {
    case "seconds":
      t.setSeconds(v);
      break;
    case "millis":
      t."""


def test_a_switch_arm_follows_its_label():
    assert _analogy(SWITCH, "setMillis(v);") is not None
    assert _analogy(SWITCH, "setNanos(v);") is None  # nanos is named nowhere near


def test_the_next_step_of_a_sequence_needs_no_neighbour():
    prompt = "void visit(Binary node, Visitor visitor) {\n  node.lhs.accept(visitor);\n  node."
    found = _analogy(prompt, "rhs.accept(visitor);")
    assert found is not None and found.substitutions == (("lhs", "rhs"),)
    assert _analogy(prompt, "mid.accept(visitor);") is None
    assert _analogy('codes = [(BadGateway, 502, "x"),\n  (Gateway, ', '503, "x"),', "python") is not None
    assert _analogy('codes = [(BadGateway, 502, "x"),\n  (Gateway, ', '505, "x"),', "python") is None


def test_an_earlier_api_use_does_not_explain_a_new_method_or_new_data():
    refs = "void run(Set refs, Ref ref) {\n  if (ok) refs.add(ref);\n  refs."
    assert _analogy(refs, "remove(ref);") is None  # add -> remove: the file never shows remove
    py = 'def test_base():\n    response = wrappers.Response("\\u00f6")\n    response = wrappers.'
    assert _analogy(py, 'Response("foo")', "python") is None  # a new literal is data
    rules = 'def test_methods():\n    post = r.Rule("/post/", methods=["POST"])\n    get = r.'
    found = _analogy(rules, 'Rule("/get/", methods=["GET"])', "python")  # ... unless the statement names it
    assert found is not None and len(found.substitutions) == 2


def test_a_one_token_groundtruth_that_only_shares_its_anchor_is_no_pattern():
    assert _analogy("a.first();\nb.", "second();") is None
    # ... but one that keeps most of the earlier name is (the cursor's line names the new part)
    prompt = "int intValue = proxy.testMethodInt();\nReturnObject objectValue = proxy."
    assert _analogy(prompt, "testMethodObject();") is not None
    assert _analogy(prompt, "otherMethodObject();") is None  # two of three parts changed


def test_a_plural_counts_as_its_singular():
    prompt = ("for (Method method : methods) doc.methods.put(name, str);\n"
              "for (Field field : fields) {\n  String name = field.name;\n  doc.")
    assert _analogy(prompt, "fieldz.put(name, str);") is None
    prompt = prompt.replace("for (Field field : fields)", "for (Field field : all)")
    assert "fields" not in prompt and _analogy(prompt, "fields.put(name, str);") is not None


def test_delegation_under_the_enclosing_name():
    echo = EnclosingEcho().judge(SETTERS, "setMinZoomLevel(value);", "java")
    assert echo is not None and echo.reason is Reason.ECHOES_ENCLOSING_NAME
    short = "void setX(int value) {\n  view."
    assert EnclosingEcho().judge(short, "setXAxisLabel(value);", "java") is None  # a short stem extends by chance


def test_vocabulary_leaves_long_arrangements_of_known_words():
    prompt = 'opt("-a", multiple=True, default=("a", "b"))\nx = 1\nopt('
    assert KnownVocabulary().judge(prompt, 'multiple=True)', "python") is not None
    long_gt = '"-a", default=("a", "b"), multiple=True)'
    assert KnownVocabulary().judge(prompt, long_gt, "python") is None


def test_surprisal_is_low_for_a_repeat_high_for_the_new_and_deterministic():
    prompt = "x = compute(a, b)\ny = compute(a, b)\nz = "
    known = FileKnowledge.of(prompt, "python", "")
    repeat = surprisal(code_tokens("compute(a, b)", "python"), known)
    novel = surprisal(code_tokens("unheard(q, r)", "python"), FileKnowledge.of(prompt, "python", "unheard(q, r)"))
    assert repeat is not None and novel is not None and repeat < 2 < novel
    assert repeat == surprisal(code_tokens("compute(a, b)", "python"), FileKnowledge.of(prompt, "python", ""))
    assert surprisal([], known) is None
    assert LowSurprisal().judge(prompt, "compute(a, b)", "python") is not None
    assert LowSurprisal().judge(prompt, "unheard(q, r)", "python") is None


def test_metadata_predictability_is_recorded_and_drops_nothing():
    meta = ExampleMetadata("t/1", "repo", "a.java", 0, 6, 7, language="java")
    ex = CompletionExample(SETTERS, "setMinZoomLevel(value);", "\n  }\n}\n", meta)
    ledger = DropLedger()
    kept = list(PredictabilityScore(ledger)([ex]))
    assert kept == [ex] and not ledger.dropped and not ledger.kept
    score = ex.metadata.predictability
    assert score is not None and {ScreenName.ANALOGY.value, ScreenName.ECHO.value} <= set(score["screens"])
    assert score == predictability(ex.prompt, ex.groundtruth, "java", ex.right_context)
    assert json.loads(json.dumps(ex.to_dict()))["metadata"]["predictability"] == score
    # in a build, the profile's screens have passed already and are not run again
    ex.metadata.predictability = None
    kept = list(PredictabilityScore(ledger, "strict")([ex]))
    assert ex.metadata.predictability == {"surprisal": score["surprisal"],
                                          "screens": [s for s in score["screens"] if s == "first_name"]}
    assert "predictability" not in ExampleMetadata("t/2", "repo", "a.java", 0, 1, 2).to_dict()


def test_hostile_inputs_keep_the_new_screens_bounded():
    long_prompt = "a.b(c);\n" * 20000 + "a."
    assert _analogy(long_prompt, "b(c);") is not None
    assert _analogy(long_prompt, "x" * 5000) is None
    for prompt, gt in (("", "x"), ("x", ""), ("'open\n\"also", 'f("open'), ("\x00\u202e" * 50, "a.b")):
        verdicts = judge_all(prompt, gt, "python")
        assert verdicts[ScreenName.ANALOGY] is None or verdicts[ScreenName.ANALOGY].detail
        predictability(prompt, gt, "csharp")


def test_keywords_of_the_language_never_make_a_groundtruth_new():
    prompt = ("class PolylineManager {\n  private final PolylineDelegate<Line, PolylineManager> delegate =\n"
              "      new ")
    assert "this" not in prompt
    assert KnownVocabulary().judge(prompt, "PolylineDelegate<>(this);", "java") is not None
    assert KnownVocabulary().judge(prompt, "PolylineDelegate<>(self);", "java") is None  # not Java's keyword
    assert KnownVocabulary().judge("x = make(\n", "self)", "python") is not None


def test_a_megabyte_groundtruth_is_scored_on_its_first_tokens():
    import time

    prompt = "a = b + c\n" * 2000
    gt = "a + " * 250_000
    start = time.perf_counter()
    bits = surprisal(code_tokens(gt, "python"), FileKnowledge.of(prompt, "python", gt))
    assert bits is not None and time.perf_counter() - start < 30  # generous: the machine is shared


def test_the_score_does_not_depend_on_which_examples_of_the_file_came_first():
    import benchsmith.builders.cceval.screen_text as st

    text = 'a = f("x y")\nb = f("x y")\nc = g(a, b)\nd = '
    cursors = [text.index("b ="), text.index("c ="), len(text)]
    first = []
    for cur in cursors:
        st._index.cache_clear()
        first.append(predictability(text[:cur], text[cur:cur + 8], "python", text[cur + 8:]))
    st._index.cache_clear()
    # the same file, its examples scored in reverse with one shared index (mid-string cuts encode new tokens)
    again = [predictability(text[:cur], text[cur:cur + 8], "python", text[cur + 8:]) for cur in reversed(cursors)]
    assert list(reversed(again)) == first


def test_a_declaration_named_after_what_it_holds_echoes_an_imported_callee():
    prompt = ("import { popScheduler } from '../util/args';\nimport { AsyncScheduler } from './AsyncScheduler';\n"
              "import { AsyncAction } from './AsyncAction';\n\nexport function combine(...args: any[]) {\n"
              "  const scheduler = ")
    v = EnclosingEcho().judge(prompt, "popScheduler(args);", "typescript")
    assert v is not None and v.reason is Reason.ECHOES_ENCLOSING_NAME
    assert EnclosingEcho().judge(prompt.replace("const scheduler = ", "const s = "), "popScheduler(args);",
                                 "typescript") is None  # too short a name to say what it holds
    assert EnclosingEcho().judge(prompt, "popScheduler(argv);", "typescript") is None  # argv is new
    declared = prompt.replace("  const scheduler = ", "export const asyncScheduler = new ")
    assert EnclosingEcho().judge(declared, "AsyncScheduler(AsyncAction);", "typescript") is not None
    assert EnclosingEcho().judge(prompt.replace("const scheduler = ", "const fast = "), "popScheduler(args);",
                                 "typescript") is None


def test_echo_finds_the_header_of_a_block_opened_on_its_own_line():
    allman = ("internal class MethodObject\n{\n    public MethodObject(Type type, bool allow_threads)\n    {\n"
              "        Init(type);\n        binder.")
    assert EnclosingEcho().judge(allman, "allow_threads = allow_threads;", "csharp") is not None
    assert EnclosingEcho().judge(allman.replace("bool allow_threads", "bool threads"),
                                 "allow_threads = threads;", "csharp") is None


def test_an_analogy_does_not_explain_another_receivers_member_by_a_word_in_another_role():
    prompt = ("class Queue {\n  void add(Ref ref) {\n    hostReferences.add(ref);\n  }\n"
              "  void run() {\n    Ref ref = (Ref) remove(250);\n" + "    wake();\n" * 4 + "    hostReferences.")
    assert _analogy(prompt, "remove(ref);") is None  # remove() is this class's, not the set's
    assert _analogy(prompt + "remove(ref);\n    other.", "remove(ref);") is not None


def test_a_comment_just_above_names_a_keyword_argument():
    prompt = ("import attrs\n\n\n@attrs.define\nclass A:\n    x: int\n\n\n# field_transformer\n"
              "def hook(cls, fields):\n    return fields\n\n\n@attrs.")
    assert KnownVocabulary().judge(prompt, "define(field_transformer=hook)", "python") is not None
    far = prompt.replace("# field_transformer\n", "# field_transformer\n" + "\n".join(["x = 1"] * 10) + "\n")
    assert KnownVocabulary().judge(far, "define(field_transformer=hook)", "python") is None
    # a string is no comment: a test's parameter names are strings above it
    strung = prompt.replace("# field_transformer", "NAMES = 'field_transformer'")
    assert KnownVocabulary().judge(strung, "define(field_transformer=hook)", "python") is None
