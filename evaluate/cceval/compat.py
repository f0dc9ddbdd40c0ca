"""Compat mode: the released CrossCodeEval line-completion scorer's numbers, quirks included.

Behaviour reproduced (amazon-science/cceval ``scripts/eval_metric.py`` + ``scripts/eval_utils.py`` @25f9cab):

- Python statement truncation: the released code re-parses ``prompt + completion[:i+1]`` for every character
  ``i`` and returns ``completion[:i+1].rstrip()`` for the first ``i`` whose text has no ERROR node (MISSING
  nodes do not count) and whose next completion character is ``\\n``; otherwise the completion unchanged.
  Only prefixes followed by a newline can ever be returned, so we parse only those (in order) and stop at the
  first valid one: identical output, a fraction of the parses. The ERROR search skips subtrees whose
  ``has_error`` is false instead of visiting every node.
- Java/TypeScript/C#: cut after the first ``;``, ``{`` or ``}`` character -- unless it is the very first
  character (the released ``if end_idx`` treats index 0 as "not found").
- ``remove_comments``: regex ``#.*`` then ``//.*`` on any language (strings, URLs and floor division included).
- identifiers: quoted strings removed by regex, ``\\w+`` tokens whose first character is ASCII ``[_a-zA-Z]``,
  minus the language keyword list.
- es: fuzzywuzzy 0.18 ``fuzz.ratio`` with the pure-Python difflib backend (autojunk on, Python ``round``).

Known approximation: the released ERROR search recurses in Python and treats a tree deeper than the
interpreter's recursion limit (about 1000 levels) as invalid; we do not model that limit.
"""

from __future__ import annotations

import difflib
import functools
import re

from benchsmith.evaluate.cceval.common import (
    PREFIX_TRIES,
    ExampleScore,
    Language,
    exact_match,
    identifier_match,
    keywords,
    parser,
)

IDENTIFIER_RE = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
# Double- or single-quoted literal with backslash escapes; no triple quotes, no template literals.
STRING_RE = re.compile(r'"([^"\\]*(\\.[^"\\]*)*)"|\'([^\'\\]*(\\.[^\'\\]*)*)\'')
WORD_RE = re.compile(r"\w+")
HASH_COMMENT_RE = re.compile(r"#.*")
SLASH_COMMENT_RE = re.compile(r"//.*")
_TERMINATORS = re.compile(r"[;{}]")


def remove_comments(code: str) -> str:
    code = HASH_COMMENT_RE.sub("", code)
    return SLASH_COMMENT_RE.sub("", code)


def extract_identifiers(code: str, language: Language) -> list[str]:
    kw = keywords(language)
    stripped = STRING_RE.sub("", code)
    return [t for t in WORD_RE.findall(stripped) if IDENTIFIER_RE.match(t) and t not in kw]


def edit_similarity(pred: str, target: str) -> int:
    """fuzz.ratio(pred.strip(), target.strip()) with the difflib backend, as an int 0..100."""
    pred = pred.strip()
    target = target.strip()
    if pred == target:
        return 100
    if not pred or not target:
        return 0
    ratio = difflib.SequenceMatcher(None, pred, target).ratio()
    return int(round(100 * ratio))


def bracket_statement(completion: str) -> str:
    m = _TERMINATORS.search(completion)
    if m is None or m.start() == 0:
        return completion
    return completion[: m.start() + 1]


def _has_error_node(tree) -> bool:
    """True when the tree holds a node of type ERROR (MISSING nodes alone do not count)."""
    root = tree.root_node
    if not root.has_error:
        return False
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            return True
        # has_error is also true for MISSING nodes; only subtrees that report an error can hide an ERROR.
        stack.extend(c for c in node.children if c.has_error)
    return False


class PythonStatementCutter:
    """``get_python_one_statement`` of the released scorer, parsing only at newline candidates."""

    def __init__(self) -> None:
        self._parser = parser(Language.PYTHON)

    def cut(self, prompt: str, completion: str) -> str:
        try:
            prompt_bytes = prompt.encode("utf-8")
        except UnicodeEncodeError:
            # The released get_ast raises outside its try; postprocess_code_lines then returns the completion.
            return completion
        start = 1  # the released loop's first prefix is completion[:1]
        tried, tries = 0, 0
        while True:
            e = completion.find("\n", start)
            if e < 0:
                # Any valid prefix reaching the end raises IndexError there -> completion returned unchanged.
                return completion
            start = e + 1
            if tries and not completion[tried:e].strip():
                continue  # only blanks since the last prefix tried: it parses as that one did
            tries += 1
            if tries > PREFIX_TRIES:
                return completion  # as when no prefix is valid (what the released scorer does past the end)
            tried = e
            try:
                data = prompt_bytes + completion[:e].encode("utf-8")
            except UnicodeEncodeError:
                return completion
            if not _has_error_node(self._parser.parse(data)):
                return completion[:e].rstrip()


@functools.lru_cache(maxsize=1)
def _python_cutter() -> PythonStatementCutter:
    return PythonStatementCutter()


# Several samples of one task often repeat a completion; the statement cut is the only expensive step.
@functools.lru_cache(maxsize=2048)
def postprocess_code_lines(prompt: str, completion: str, language: Language) -> str:
    if language is Language.PYTHON:
        return _python_cutter().cut(prompt, completion)
    return bracket_statement(completion)


def score_example(task_id: str, prompt: str, groundtruth: str, pred: str, language: Language, sample: int = 0) -> ExampleScore:
    processed = postprocess_code_lines(prompt, pred, language)
    prediction = remove_comments(processed)
    target = remove_comments(groundtruth)
    pred_ids = extract_identifiers(prediction, language)
    target_ids = extract_identifiers(target, language)
    id_em, precision, recall, f1 = identifier_match(pred_ids, target_ids)
    return ExampleScore(
        task_id=task_id,
        pred=prediction,
        target=target,
        pred_ids=pred_ids,
        target_ids=target_ids,
        em=exact_match(prediction, target),
        es=float(edit_similarity(prediction, target)),
        id_em=id_em,
        id_precision=precision,
        id_recall=recall,
        id_f1=f1,
        pred_postprocessed=processed,
        sample=sample,
    )
