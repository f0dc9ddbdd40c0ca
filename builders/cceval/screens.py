"""Predictability screens that need no model: drop examples whose groundtruth the current file already gives away.

CrossCodeEval keeps an example only if cross-file context is needed to complete it; the paper screens with a 1B
code model.  These screens are deterministic, cheap proxies for "a competent developer could write the exact
groundtruth from the current file alone", each a small class with its own ``Reason``:

- ``InFileCopy``: an in-file copy predictor over tokens.  Before each groundtruth token, continue the token
  stream with what followed the most recent earlier occurrence of its longest repeated suffix (LZ77-style);
  predictable when that reproduces the groundtruth, whitespace and comments aside, except for at most a third of
  its tokens, which must occur before the cursor anyway (a repeated pattern with a known substitution).
- ``KnownVocabulary``: every identifier of the groundtruth already occurs in the file before the cursor (code,
  comments or strings; import statements aside), and every string or number literal occurs there as a literal
  (single-digit integers and the language's keywords always count as known).  Nothing in the groundtruth is new,
  so the file, not another file, supplies it: this is what "the same call with the same arguments earlier, an
  obvious repeated pattern" looks like token by token.  At most 5 names and literals: a longer groundtruth
  known only word by word is an arrangement the file does not give.  Roles count where the name is another
  type's API: a member of another receiver (``renderer.render``) is known only if the file reached a member of
  that name through a receiver or named it in prose (a field ``render`` of this class says nothing about the
  renderer), a keyword argument only as a keyword argument or in a comment just above, and type arguments
  (``Subject<any>``) only as the whole instantiation.
- ``EnclosingEcho``: the groundtruth's first name echoes the name of an enclosing definition or of a line the
  cursor is nested in (``def test_http_date(value, expect): assert http.`` -> ``http_date(value) == expect``;
  ``if (isCallerSensitive(m)) modifiers |= ModifierCode.`` -> ``CALLER_SENSITIVE.value;``), compared
  case-insensitively without underscores, or extends it (a wrapper ``setMinZoom`` delegating to
  ``setMinZoomLevel``), and the rest of the groundtruth is known vocabulary; or a declaration is named after
  what it holds (``const scheduler = `` -> ``popScheduler(args);``, imported names counting).
- ``EarlierAnalogy``: an earlier statement gives the groundtruth with a consistent substitution the file explains
  (``predictability.py``): sibling checks, switch arms, the mirror of the overload above, a sequence's next step.
- ``ImportedVocabulary`` (strict): ``KnownVocabulary`` counting names that only occur in import statements.
- ``LowSurprisal`` (strict): at most 4 bits per groundtruth token under an n-gram/copy model of the prompt.
- ``FirstNameSeen`` (no profile): the groundtruth's first name (the cross-file API) already occurs before the
  cursor, imports aside.  Too broad for a profile on the annotated sets; its verdict is still recorded.

``PredictabilityScore`` records ``metadata.predictability`` on the released examples: the surprisal and every
screen that fires, in or out of the profile.

Every screen reads only the prompt (the left context a model sees in the in-file setting) and the groundtruth;
none reads another file, and the right context only lets the examples of one file share one index
(``FileIndex`` in ``screen_text.py``: where each word first occurs), which keeps a file's cost linear in its
size.  Profiles (``ScreenProfile``) name the sets a build applies; the
figures that chose them are in ``bench/annotations.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.builders.cceval.screen_text import (  # noqa: F401 - some re-exported: tests and audit use them
    FileIndex, FileKnowledge, Tok, Token, _index, _norm_name, first_name, groundtruth_tokens, import_lines, lex,
    lex_line, strip_imports)
from benchsmith.builders.cceval.predictability import AnalogyFinder, surprisal, unknown_tokens
from benchsmith.enums import StrEnum
from benchsmith.pipeline import Filter
from benchsmith.records import Reason, Stage
from benchsmith.builders.cceval.records import CompletionExample


# ------------------------------------------------------------------------------------------------- the screens


class ScreenName(StrEnum):
    COPY = "copy"
    VOCABULARY = "vocabulary"
    ECHO = "echo"
    IMPORTED_VOCABULARY = "imported_vocabulary"
    FIRST_NAME = "first_name"
    ANALOGY = "analogy"
    SURPRISAL = "surprisal"


@dataclass(frozen=True)
class Verdict:
    reason: Reason
    detail: str


class Screen(Filter[CompletionExample]):
    """A filter that drops an example the current file predicts.  ``judge`` decides from the prompt and the
    groundtruth alone (the right context only lets a file's examples share one ``FileIndex``); subclasses
    implement ``_judge`` on the ``FileKnowledge`` at the cursor."""

    stage = Stage.SCREEN
    name: ScreenName
    reason: Reason

    def check(self, ex: CompletionExample):
        verdict = self.judge(ex.prompt, ex.groundtruth, ex.metadata.language, ex.right_context)
        return None if verdict is None else (verdict.reason, verdict.detail)

    def judge(self, prompt: str, groundtruth: str, language: str, right_context: str = "") -> Verdict | None:
        tokens = groundtruth_tokens(groundtruth, language)
        if not tokens:
            return None
        known = FileKnowledge.of(prompt, language, groundtruth + right_context)
        detail = self._judge(prompt, groundtruth, tokens, known)
        return None if detail is None else Verdict(self.reason, detail)

    def _judge(self, prompt: str, groundtruth: str, tokens: list[Token], known: FileKnowledge) -> str | None:
        raise NotImplementedError  # pragma: no cover - interface


class InFileCopy(Screen):
    """An in-file copy predictor over tokens (comments and whitespace never matter): before each token of the
    groundtruth, take the longest suffix of the token stream so far (the prompt, then the groundtruth up to that
    token) that occurred earlier, and predict the token that followed its most recent occurrence.  Predictable
    when the predictions are right except for at most a third of the tokens (at least one may differ), and
    every token it gets wrong occurs before the cursor anyway: a repeated pattern with a known substitution
    (``state = State.IN_QUOTE;`` above ``state = State.IN_SQUOTE;``)."""

    name = ScreenName.COPY
    reason = Reason.PREDICTABLE_BY_COPY
    max_match = 256  # tokens of suffix looked for; longer repeats predict the same and cost time
    max_miss_share = 1 / 3

    def _judge(self, prompt, groundtruth, tokens, known):
        text = known.code_prefix()
        if not text or known.index.overflow:
            return None
        code = known.index.encode
        allowed = max(1, int(len(tokens) * self.max_miss_share))
        misses: list[Token] = []
        for tok in tokens:
            nxt = _copy_next(text, self.max_match)
            c = code(tok.text)
            if nxt is None or text[nxt] != c:
                misses.append(tok)
                if len(misses) > allowed:
                    return None
            text += c
        if misses and {t.text for t in misses} & set(unknown_tokens(tokens, known)):
            return None
        if not misses:
            return "copying what followed the earlier repeats gives the groundtruth"
        return f"copying what followed the earlier repeats gives the groundtruth but {len(misses)} of " \
               f"{len(tokens)} tokens, and those occur before the cursor"


def _copy_next(text: str, max_match: int) -> int | None:
    """Position of the character that followed the most recent earlier occurrence of the longest repeated suffix
    of ``text``; None when not even the last character occurred before."""
    n = len(text)
    # Occurring earlier is monotone in the suffix length (a suffix of a repeated suffix repeats too): binary search.
    lo, hi = 0, min(n - 1, max_match)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        pos = text.rfind(text[n - mid:], 0, n - 1)
        if pos >= 0:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return None
    return text.rfind(text[n - lo:], 0, n - 1) + lo


class KnownVocabulary(Screen):
    """Every name and literal of the groundtruth occurs before the cursor, imports aside: nothing in it is new."""

    name = ScreenName.VOCABULARY
    reason = Reason.GROUNDTRUTH_VOCABULARY_IN_FILE
    with_imports = False
    # A groundtruth of more names and literals than this, each known on its own, is an arrangement the file does
    # not give (``option("-a", multiple=True, default=("a", "b"))``): annotators call it data, not a repeat.
    # Chosen on both annotated sets (bench/annotations.py): 4-6 give the same figures within a point.
    max_atoms: int | None = 5

    def _judge(self, prompt, groundtruth, tokens, known):
        if not any(t.kind is Tok.IDENT for t in tokens):
            return None
        if self.max_atoms is not None and sum(1 for t in tokens if t.kind is not Tok.PUNCT) > self.max_atoms:
            return None
        if unknown_tokens(tokens, known, self.with_imports):
            return None
        where = "before the cursor" if not self.with_imports else "before the cursor, imports included"
        return f"every name and literal of the groundtruth occurs {where}"


class ImportedVocabulary(KnownVocabulary):
    """``KnownVocabulary`` with the names of import statements counting (an imported, still unused name)."""

    name = ScreenName.IMPORTED_VOCABULARY
    reason = Reason.GROUNDTRUTH_VOCABULARY_WITH_IMPORTS
    with_imports = True


class EnclosingEcho(Screen):
    """The first name repeats a name on the cursor's line or a line it is nested in (the method header, the
    ``if`` around it), or is what a test, predicate or accessor there is named after (``test_http_date`` ->
    ``http_date``, ``isCallerSensitive`` -> ``CALLER_SENSITIVE``, compared without case and underscores), and
    the rest of the groundtruth occurs before the cursor."""

    name = ScreenName.ECHO
    reason = Reason.ECHOES_ENCLOSING_NAME
    prefixes = ("test", "is", "get", "set", "has")
    min_chars = 4  # after a prefix, shorter names (id, x) echo by chance
    min_extended = 8  # a wrapper named setMinZoom calling setMinZoomLevel; shorter stems extend by chance
    min_declared = 6  # a variable named after what it holds (parser, scheduler); shorter names (value, x) are not

    def _judge(self, prompt, groundtruth, tokens, known):
        first = first_name(tokens)
        if first is None:
            return None
        key = _norm_name(first)
        host = None
        lines = [lex_line(line, known.language) for line in known.outline()]
        for line in lines:
            for t in line:
                if t.kind is Tok.IDENT and (t.text == first or (
                        len(key) >= self.min_chars and _norm_name(t.text) in {p + key for p in self.prefixes})
                        or _extends(key, _norm_name(t.text), self.min_extended)):
                    host = t.text
                    break
            if host is not None:
                break
        rest = next(i for i, t in enumerate(tokens) if t.kind is Tok.IDENT) + 1
        if host is None:
            return self._declared(first, tokens, rest, known, lines[0])
        if unknown_tokens(tokens, known, start=rest):
            return None
        return f"{first!r} echoes {host!r} on an enclosing line and the rest of the groundtruth occurs before the " \
               "cursor"

    def _declared(self, first: str, tokens: list[Token], rest: int, known: FileKnowledge,
                  line: tuple[Token, ...]) -> str | None:
        """A declaration named after what it holds: the variable being assigned on the cursor's line is the first
        name, or its last words (``const scheduler = popScheduler(args)``, ``asyncScheduler = new
        AsyncScheduler(AsyncAction)``), and the rest is known, imported names included (the file imported them
        for this).  ``line``: the cursor's line, lexed."""
        key = _norm_name(first)
        for i in range(len(line) - 1):
            t = line[i]
            if t.kind is Tok.IDENT and line[i + 1].text == "=" and (
                    i + 2 >= len(line) or line[i + 2].text not in ("=", ">")):
                target = _norm_name(t.text)
                if len(target) >= self.min_declared and key.endswith(target) and known.knows_word(first, True) \
                        and not unknown_tokens(tokens, known, True, start=rest):
                    return f"{first!r} is what {t.text!r}, declared on the cursor's line, is named after, and the " \
                           "rest of the groundtruth occurs before the cursor, imports included"
        return None


def _extends(name: str, host: str, min_chars: int) -> bool:
    """``name`` is ``host`` with more after it (a wrapper passing its parameters on under its own name)."""
    return len(host) >= min_chars and name != host and name.startswith(host)


class EarlierAnalogy(Screen):
    """An earlier statement, after the same token, gives the groundtruth with a consistent substitution that the
    file explains (``predictability.AnalogyFinder``): the same call again, a sibling check, the next switch arm,
    the mirror of the overload above."""

    name = ScreenName.ANALOGY
    reason = Reason.PREDICTABLE_BY_ANALOGY

    def _judge(self, prompt, groundtruth, tokens, known):
        found = AnalogyFinder(known).find(tokens)
        return None if found is None else found.describe()


class LowSurprisal(Screen):
    """The groundtruth costs at most ``max_bits`` bits per token under an n-gram/copy model of the prompt."""

    name = ScreenName.SURPRISAL
    reason = Reason.LOW_SURPRISAL
    max_bits = 4.0  # the strict profile's cut, chosen by cross-validation over repositories (bench/annotations.py)

    def _judge(self, prompt, groundtruth, tokens, known):
        bits = surprisal(tokens, known)
        if bits is None or bits > self.max_bits:
            return None
        return f"the groundtruth costs {bits:.2f} bits per token under an n-gram model of the prompt"


class FirstNameSeen(Screen):
    """The groundtruth's first name, the cross-file API, already occurs before the cursor, imports aside."""

    name = ScreenName.FIRST_NAME
    reason = Reason.FIRST_NAME_IN_FILE

    def _judge(self, prompt, groundtruth, tokens, known):
        first = first_name(tokens)
        if first is None or not known.knows_word(first):
            return None
        return f"{first!r} already occurs before the cursor (imports aside)"


SCREENS: dict[ScreenName, type[Screen]] = {
    ScreenName.COPY: InFileCopy,
    ScreenName.VOCABULARY: KnownVocabulary,
    ScreenName.ECHO: EnclosingEcho,
    ScreenName.IMPORTED_VOCABULARY: ImportedVocabulary,
    ScreenName.FIRST_NAME: FirstNameSeen,
    ScreenName.ANALOGY: EarlierAnalogy,
    ScreenName.SURPRISAL: LowSurprisal,
}


class ScreenProfile(StrEnum):
    """Which screens a build applies.  ``none``: the paper's filters only (replication); ``default`` and
    ``strict``: the rungs that cross-validation by repository chose on both annotated sets (bench/annotations.py)
    for at most 10% (default) and 5% (strict) predictable among kept.  ``first_name`` is in neither: it throws
    away too many examples that need the repository; every screen's verdict is still in
    ``metadata.predictability``."""

    NONE = "none"
    DEFAULT = "default"
    STRICT = "strict"


PROFILES: dict[ScreenProfile, tuple[ScreenName, ...]] = {
    ScreenProfile.NONE: (),
    ScreenProfile.DEFAULT: (ScreenName.COPY, ScreenName.VOCABULARY, ScreenName.ECHO, ScreenName.ANALOGY),
    ScreenProfile.STRICT: (ScreenName.COPY, ScreenName.VOCABULARY, ScreenName.ECHO, ScreenName.ANALOGY,
                           ScreenName.IMPORTED_VOCABULARY, ScreenName.SURPRISAL),
}


def profile_screens(profile: ScreenProfile | str, counter=None) -> list[Screen]:
    """The screens of ``profile`` in the order they apply (an example dropped by one is counted under its
    reason only)."""
    return [SCREENS[name](counter) for name in PROFILES[ScreenProfile(profile)]]


def judge_all(prompt: str, groundtruth: str, language: str, right_context: str = "") -> dict[ScreenName, Verdict | None]:
    """Every screen's verdict on one example, each on its own (for audits and measurements)."""
    return {name: cls().judge(prompt, groundtruth, language, right_context) for name, cls in SCREENS.items()}


def profile_drops(verdicts: dict[ScreenName, Verdict | None], profile: ScreenProfile | str) -> ScreenName | None:
    """The screen of ``profile`` that drops an example with these verdicts (the first in profile order)."""
    return next((name for name in PROFILES[ScreenProfile(profile)] if verdicts.get(name) is not None), None)


def predictability(prompt: str, groundtruth: str, language: str, right_context: str = "",
                   passed: tuple[ScreenName, ...] = ()) -> dict:
    """``metadata.predictability``: the groundtruth's surprisal (bits per token under an n-gram/copy model of the
    prompt, ``predictability.surprisal``; None for a groundtruth without code tokens) and every screen that fires
    on it, in or out of the build's profile, so that a user can pick a stricter cut knowingly.  ``passed``: screens
    already known not to fire (the build's profile, for an example it kept), which are not run again."""
    tokens = groundtruth_tokens(groundtruth, language)
    bits = surprisal(tokens, FileKnowledge.of(prompt, language, groundtruth + right_context)) if tokens else None
    fired = []
    for name, cls in SCREENS.items():
        if name in passed:
            continue
        if name is ScreenName.SURPRISAL:  # the same figure as above: not computed twice
            hit = bits is not None and bits <= LowSurprisal.max_bits
        else:
            hit = cls().judge(prompt, groundtruth, language, right_context) is not None
        if hit:
            fired.append(name.value)
    return {"surprisal": None if bits is None else round(bits, 3), "screens": fired}


class PredictabilityScore(Filter[CompletionExample]):
    """Records ``metadata.predictability`` on every example that stays; drops nothing.  It runs after sampling, so
    only the released examples pay for it, and skips the profile's own screens, which every one of them passed."""

    stage = Stage.SCREEN
    tally_kept = False  # the screens' tally stays as it was: this step keeps everything it sees

    def __init__(self, counter=None, profile: ScreenProfile | str = ScreenProfile.NONE) -> None:
        super().__init__(counter)
        self.passed = PROFILES[ScreenProfile(profile)]

    def check(self, ex: CompletionExample):
        ex.metadata.predictability = predictability(ex.prompt, ex.groundtruth, ex.metadata.language,
                                                    ex.right_context, self.passed)
        return None
