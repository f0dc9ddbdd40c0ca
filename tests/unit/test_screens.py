"""The model-free predictability screens: each on positive and negative cases written for these tests."""

from __future__ import annotations

import pytest

from benchsmith.builders.cceval.screens import (
    PROFILES,
    SCREENS,
    EnclosingEcho,
    FirstNameSeen,
    ImportedVocabulary,
    InFileCopy,
    KnownVocabulary,
    ScreenName,
    ScreenProfile,
    Tok,
    judge_all,
    lex,
    profile_drops,
    profile_screens,
    strip_imports,
)
from benchsmith.pipeline import DropLedger
from benchsmith.records import Reason, Stage
from benchsmith.builders.cceval.records import CompletionExample, ExampleMetadata

# --------------------------------------------------------------------------------------------------- the lexer


def test_lexer_keeps_strings_whole_and_comments_apart():
    toks = lex('x = f("a; b", 10)  # say "hi"\n', "python")
    assert [(t.kind, t.text) for t in toks if t.kind is not Tok.PUNCT] == [
        (Tok.IDENT, "x"), (Tok.IDENT, "f"), (Tok.STRING, '"a; b"'), (Tok.NUMBER, "10"), (Tok.COMMENT, '# say "hi"')]
    java = lex('s = `t ${a}`; /* c */ y = @"v"; // end', "csharp")
    assert [t.text for t in java if t.kind is Tok.STRING] == ["`t ${a}`", '@"v"']
    assert [t.text for t in java if t.kind is Tok.COMMENT] == ["/* c */", "// end"]
    assert [t.text for t in lex('d = """one\n"two"\n"""', "python") if t.kind is Tok.STRING] == ['"""one\n"two"\n"""']


def test_strip_imports_follows_brackets_and_leaves_statements():
    py = "from a import (\n    b,\n    c,\n)\nimport os\nx = b()\n"
    assert strip_imports(py, "python") == "\n\n\n\n\nx = b()\n"
    ts = "import {\n  Observable,\n} from './Observable';\nconst o = new Observable();\n"
    assert strip_imports(ts, "typescript").splitlines()[-1] == "const o = new Observable();"
    assert "Observable," not in strip_imports(ts, "typescript")
    cs = "using System.Text;\nusing Alias = Foo.Bar;\nusing (var s = Open()) { }\n"
    assert strip_imports(cs, "csharp") == "\n\nusing (var s = Open()) { }\n"
    assert strip_imports("import x\n", "unknown-language") == "import x\n"  # unknown: nothing stripped


# ----------------------------------------------------------------------------------------------------- screens

JAVA_REPEAT = """class QuoteRule {
  boolean apply(Parser parser, Entity entity) {
    if (entity.token == Token.QUOTE)
      parser.state = State.IN_QUOTE;
    // single quotes go to State.IN_SQUOTE
    if (entity.token == Token.SQUOTE)
      parser."""


def test_copy_predicts_a_repeated_pattern_with_a_known_substitution():
    verdict = InFileCopy().judge(JAVA_REPEAT, "state = State.IN_SQUOTE;", "java")
    assert verdict is not None and verdict.reason is Reason.PREDICTABLE_BY_COPY
    # The exact repeat is found whatever the whitespace (tokens, not characters, are compared).
    prompt = "a = make(1,\n    2);\nb = 3\nc = make(1,\n    2);\nd = 4\nq = make("
    assert InFileCopy().judge(prompt, "1, 2);", "java") is not None


def test_copy_rejects_a_substitution_the_file_does_not_contain():
    assert InFileCopy().judge(JAVA_REPEAT, "state = State.IN_BACKTICK;", "java") is None
    # A different shape is not a copy, even with known tokens.
    assert InFileCopy().judge(JAVA_REPEAT, "token = Entity.QUOTE + 1;", "java") is None


PY_FILE = """from werk.http import parse_range, http_date
import helpers


def test_range(value, expect):
    rv = parse_range("bytes=0-10")
    assert rv == expect
    other = helpers.make(value, width=3)
    limit = 4
    result = http."""


def test_vocabulary_drops_what_the_file_already_spells_out():
    screen = KnownVocabulary()
    v = screen.judge(PY_FILE, 'parse_range("bytes=0-10") == expect', "python")
    assert v is not None and v.reason is Reason.GROUNDTRUTH_VOCABULARY_IN_FILE
    assert screen.judge(PY_FILE, "parse_range(value, 7)", "python") is not None  # single digits count as known
    assert screen.judge(PY_FILE, "make(value, width=limit)", "python") is not None  # width= is a known keyword


def test_vocabulary_keeps_new_names_literals_and_keywords():
    screen = KnownVocabulary()
    assert screen.judge(PY_FILE, 'parse_range("bytes=5-")', "python") is None  # a new literal
    assert screen.judge(PY_FILE, "parse_range(value, 42)", "python") is None  # a new number
    assert screen.judge(PY_FILE, "parse_range(value, strict=True)", "python") is None  # a new name
    # `value` is known as a variable, not as a keyword argument: which keywords a callee takes is API knowledge.
    assert screen.judge(PY_FILE, "make(value, value=limit)", "python") is None
    # `http_date` is only imported: imports aside, it is new; the imported-vocabulary screen counts it.
    assert screen.judge(PY_FILE, "http_date(value)", "python") is None
    v = ImportedVocabulary().judge(PY_FILE, "http_date(value)", "python")
    assert v is not None and v.reason is Reason.GROUNDTRUTH_VOCABULARY_WITH_IMPORTS
    assert screen.judge(PY_FILE, "==", "python") is None  # nothing to know: no name at all


EXTRACTOR = """class Extractor {
  static public boolean render = true;
  // the manager's populate step runs first
  void extract(Documentation documentation, Node description) {
    typeFactory.populate(description);
    if (render)
      documentation."""


def test_a_member_of_another_receiver_is_known_only_in_that_role():
    screen = KnownVocabulary()
    # `render` is a field of this class: nothing says the renderer has a method of that name
    assert screen.judge(EXTRACTOR, "description = renderer.render(description);", "java") is None
    assert screen.judge(EXTRACTOR + "x = renderer.render(n);\n", "renderer.render(description);", "java") is not None
    # reached through a receiver before (`typeFactory.populate`), or named in prose (the comment's `manager`)
    assert screen.judge(EXTRACTOR, "populate(description);", "java") is not None
    assert screen.judge(EXTRACTOR.replace("documentation.", "other."), "manager;", "java") is not None
    assert screen.judge(EXTRACTOR.replace("documentation.", "other."), "extract;", "java") is None  # a declaration
    # the file's own members: a declaration is enough
    assert screen.judge(EXTRACTOR.replace("documentation.", "this."), "extract(documentation, description);",
                        "java") is not None
    # Python: `from werk.http import parse_range` reaches parse_range through http, as `http.parse_range` does
    assert screen.judge(PY_FILE, "parse_range(value)", "python") is not None
    assert screen.judge(PY_FILE.replace("result = http.", "result = helpers."), "http_date", "python") is None


TYPED = """import { Subject, Observable } from './Subject';
export function of<T>(value: T): Observable<T>;
export function make(): void {
  const s: Subject<number> = new Subject<number>();
  return new """


def test_type_arguments_are_a_choice_the_file_makes_only_as_a_whole():
    screen = KnownVocabulary()
    assert screen.judge(TYPED, "Subject<number>();", "typescript") is not None  # the same instantiation above
    assert screen.judge(TYPED, "Subject<T>();", "typescript") is None  # T and Subject are known, Subject<T> is not
    assert screen.judge(TYPED, "Observable<T>(value);", "typescript") is not None
    # comparisons and Java's diamond are no type arguments
    assert screen.judge(TYPED, "value < value;", "typescript") is not None
    assert screen.judge("class A {\n  Subject<T> s = new ", "Subject<>(this);", "java") is not None


ANDROID = """package maps;

public class MapViewManager {
  public void setShowTraffic(MapView view, boolean showTraffic) {
    view.setShowTraffic(showTraffic);
  }

  public void setShowIndoors(MapView view, boolean showIndoors) {
    view."""


def test_echo_of_the_enclosing_member_and_its_parameters():
    v = EnclosingEcho().judge(ANDROID, "setShowIndoors(showIndoors);", "java")
    assert v is not None and v.reason is Reason.ECHOES_ENCLOSING_NAME
    test_file = "import http\n\n\ndef test_http_date(value, expect):\n    '''Dates.'''\n    assert http."
    assert EnclosingEcho().judge(test_file, "http_date(value) == expect", "python") is not None
    nested = ("class M {\n  int f(Method method) {\n    int modifiers = ModifierCode.BEAN.value;\n"
              "    if (isCallerSensitive(method))\n      modifiers |= ModifierCode.")
    assert EnclosingEcho().judge(nested, "CALLER_SENSITIVE.value;", "java") is not None
    assert EnclosingEcho().judge(nested, "CALLER_SENSITIVE.mask;", "java") is None  # .mask is new


def test_echo_needs_the_name_on_an_enclosing_line_and_known_arguments():
    # setShowTraffic is in the file but not on a line the cursor is nested in.
    assert EnclosingEcho().judge(ANDROID, "setShowTraffic(showIndoors);", "java") is None
    assert EnclosingEcho().judge(ANDROID, "setShowIndoors(false, 1.5f);", "java") is None  # 1.5f is new
    # A name merely contained in a longer one (Response in test_response_iter) is no echo.
    prompt = "import w\n\n\ndef test_response_iter(resp):\n    '''x'''\n    r = w."
    assert EnclosingEcho().judge(prompt, "Response(resp)", "python") is None


def test_first_name_seen_imports_aside():
    v = FirstNameSeen().judge(PY_FILE, 'parse_range("new")', "python")
    assert v is not None and v.reason is Reason.FIRST_NAME_IN_FILE
    assert FirstNameSeen().judge(PY_FILE, "http_date(value)", "python") is None  # only in the import
    assert FirstNameSeen().judge(PY_FILE, "unheard_of()", "python") is None


def test_screens_read_neither_comments_of_the_groundtruth_nor_the_right_context():
    # A comment in the groundtruth does not count as tokens to know.
    assert KnownVocabulary().judge(PY_FILE, "parse_range(value)  # brand new words", "python") is not None


# ----------------------------------------------------------------------------------------------------- profiles


def _example(prompt: str, groundtruth: str, tid: str = "t/1") -> CompletionExample:
    return CompletionExample(prompt, groundtruth, "\n", ExampleMetadata(tid, "repo", "a.py", 0, prompt.count("\n"),
                                                                         prompt.count("\n") + 1, language="python"))


def test_profiles_nest_and_none_is_empty():
    assert PROFILES[ScreenProfile.NONE] == ()
    assert set(PROFILES[ScreenProfile.DEFAULT]) < set(PROFILES[ScreenProfile.STRICT]) < set(SCREENS)
    assert ScreenName.FIRST_NAME not in PROFILES[ScreenProfile.STRICT]  # too costly on both annotated sets
    assert [s.name for s in profile_screens("strict")] == list(PROFILES[ScreenProfile.STRICT])
    with pytest.raises(ValueError):
        profile_screens("lenient")
    assert len({cls.reason for cls in SCREENS.values()}) == len(SCREENS)  # one reason per screen


def test_screens_as_pipeline_steps_count_each_drop_under_its_own_reason():
    from benchsmith.pipeline import chain

    counter = DropLedger()
    examples = [_example(PY_FILE, 'parse_range("bytes=0-10") == expect', "t/vocab"),
                _example(PY_FILE, 'parse_range("fresh")', "t/first"),
                _example(PY_FILE, "unheard_of(value)", "t/keep")]
    screens = [SCREENS[n](counter) for n in (ScreenName.VOCABULARY, ScreenName.FIRST_NAME)]
    kept = list(chain(iter(examples), *screens))
    assert [e.task_id for e in kept] == ["t/keep"]
    assert counter.dropped == {Reason.GROUNDTRUTH_VOCABULARY_IN_FILE.value: 1, Reason.FIRST_NAME_IN_FILE.value: 1}
    assert {e.stage for e in counter.exclusions} == {Stage.SCREEN}
    kept = list(chain(iter(examples), *profile_screens(ScreenProfile.DEFAULT, DropLedger())))
    assert [e.task_id for e in kept] == ["t/first", "t/keep"]


def test_judge_all_and_profile_drops_agree_with_the_steps():
    verdicts = judge_all(PY_FILE, 'parse_range("fresh")', "python")
    assert verdicts[ScreenName.FIRST_NAME] is not None and verdicts[ScreenName.VOCABULARY] is None
    assert profile_drops(verdicts, "default") is None
    assert profile_drops(verdicts, "none") is None
    verdicts = judge_all(PY_FILE, 'parse_range("bytes=0-10") == expect', "python")
    assert profile_drops(verdicts, "default") is ScreenName.VOCABULARY


def test_hostile_inputs_do_not_break_the_screens():
    for prompt, gt in (("", "x"), ("x", ""), ("'unterminated\n\"also", "f(\"open"), ("\x00\u202e" * 50, "a.b"),
                       ("a" * 20000, "a" * 10)):
        for name, verdict in judge_all(prompt, gt, "python").items():
            assert verdict is None or verdict.detail
        judge_all(prompt, gt, "java")


def test_the_right_context_is_never_known_and_only_shares_the_index():
    rest_with_answers = '\nparse_range("bytes=5-")\nbrand_new = 1\nmake(value, strict=True)\n'
    for gt in ('parse_range("bytes=5-")', "brand_new(value)", "make(value, strict=True)", "parse_range(value, 7)"):
        alone = judge_all(PY_FILE, gt, "python")
        shared = judge_all(PY_FILE, gt, "python", rest_with_answers)
        assert alone == shared, gt
    assert judge_all(PY_FILE, "brand_new(value)", "python", rest_with_answers)[ScreenName.VOCABULARY] is None


def test_copy_abstains_when_a_file_has_more_distinct_tokens_than_characters(monkeypatch):
    import benchsmith.builders.cceval.screen_text as screens  # the file index lives there

    prompt, gt = "a = b\nc = d\ne = f\na = b\n", "c = d"
    assert InFileCopy().judge(prompt, gt, "python") is not None
    monkeypatch.setattr(screens, "_MAX_IDS", 5)
    screens._index.cache_clear()
    assert InFileCopy().judge(prompt, gt, "python") is None
    screens._index.cache_clear()


def test_the_file_index_cache_keeps_files_by_size_not_by_count(monkeypatch):
    import benchsmith.builders.cceval.screen_text as screens

    screens._index.cache_clear()
    files = [f"x{i} = {i}\n" * 10 for i in range(20)]
    first = [screens._index(text, "python") for text in files]
    # sampled order revisits files: twenty small files stay indexed, each built once
    assert all(screens._index(text, "python") is idx for text, idx in zip(files, first))
    monkeypatch.setattr(screens._IndexCache, "max_chars", 3 * len(files[0]))
    screens._index(files[0], "python")  # used again: now the most recent of the twenty
    screens._index("y = 1\n" * 10, "python")  # a new file: the least recently used go, down to three files
    assert screens._index(files[0], "python") is first[0]
    assert screens._index(files[1], "python") is not first[1]
    screens._index.cache_clear()
