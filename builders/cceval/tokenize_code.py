"""The lexical tokenizer CrossCodeEval's prompt builder ranks chunks with, reimplemented without NLTK.

The original splits text with NLTK's ``word_tokenize`` (Punkt sentences, then the Treebank-style word tokenizer)
and keeps every ``\\w+`` run of every token.  Almost all of that machinery only moves punctuation around, which
``\\w+`` throws away anyway; the only rules that change the ``\\w+`` runs are the contraction splits:

* ``n't`` / ``N'T`` is cut off the word before it when a space follows it by the time that rule runs
  (``don't`` -> ``do n't`` -> ``do``, ``n``, ``t`` instead of ``don``, ``t``);
* whole words ``cannot gimme gonna gotta lemme`` (any case) become two words, and ``wanna`` too when
  followed by a space (``can not``, ``gon na``...).

So we take ``\\w+`` runs from the raw text and apply just those splits, deciding "a space follows" with the
characters the word tokenizer pads with spaces before it gets to contractions (see ``_pads_before``).  Punkt only
matters here through the final-period rule: a sentence ending in ``don't.`` pads the period.  Punkt breaks a
sentence after a period followed by whitespace or by one of its "after" punctuation characters unless the word
is an abbreviation, and ``...n't`` / ``wanna`` never are, so that is what ``_pads_before`` checks for ``.``.

Known difference: ``'tis`` / ``'twas`` (split by NLTK < 3.9, not by the NLTK 3.9+ quote rule) follow 3.9+.
``tests/unit/test_retrieval_tokenize.py`` checks equality with NLTK itself on real and adversarial text.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")
# Characters the Treebank-style tokenizer always surrounds with spaces before its contraction rules run.
_ALWAYS_PADDED = frozenset(";@#$%&?!*[](){}<>«“‘„`»”’\"") | frozenset(chr(c) for c in range(0x2012, 0x2016))
# Punkt's "after token" characters: a period followed by one of these can end a sentence.
_PUNKT_AFTER = frozenset("?!)\";}]*:@'({[\u2018\u2019\u201c\u201d\xab\xbb")
# What may follow the final period of a sentence for the Treebank final-period rule to still apply.
_PUNKT_REALIGN = re.compile("[\"')\\]}\u2018\u2019\u201c\u201d\xab\xbb]+?(?:\\s+|(?=--)|\\Z)")
_FINAL_PERIOD_TAIL = re.compile(r"[\]\)}>\"'»”’ ]*\s*\Z")
_SPLIT_WORDS = re.compile(r"(?i)cannot|gimme|gonna|gotta|lemme|wanna")
_WHOLE_WORD_SPLITS = {"cannot": 3, "gimme": 3, "gonna": 3, "gotta": 3, "lemme": 3}


def _pads_before(text: str, i: int, early: bool = False) -> bool:
    """Whether the tokenizer sees a space at ``text[i]`` when it applies its contraction rules (``early``: already
    before its closing-quote rules, which is what a ``'s`` needs to be detached by them)."""
    n = len(text)
    if i >= n:
        return True  # the text (each sentence) is padded with a space at both ends
    c = text[i]
    nxt = text[i + 1] if i + 1 < n else ""
    if c.isspace() or c in _ALWAYS_PADDED:
        return True
    if c in ",:":
        return nxt == "" or not nxt.isdecimal()
    if c == "-":
        return nxt == "-"
    if c == ".":
        if nxt == "." or _FINAL_PERIOD_TAIL.match(text, i + 1):
            return True  # an ellipsis, or the text's final period
        if nxt.isspace() or nxt in _PUNKT_AFTER:
            # Punkt may end the sentence here, making this the sentence's final period -- unless a later
            # sentence-end character of the same whitespace-delimited word takes the break.
            j = i + 1
            while j < n and not text[j].isspace():
                if text[j] in ".?!" and j + 1 < n:
                    after = text[j + 1]
                    if after in _PUNKT_AFTER or (after.isspace() and text[j + 1 :].strip()):
                        return False
                j += 1
            # Punkt moves closing quotes/brackets that open the next sentence back onto this one; the period is
            # then final only if nothing but such characters and spaces follows it.
            k = i + 1
            while k < n and text[k].isspace():
                k += 1
            moved = _PUNKT_REALIGN.match(text, k)
            if moved:
                return _FINAL_PERIOD_TAIL.match(text[i + 1 : moved.end()]) is not None
            return True
        return False
    if c == "'":
        if nxt == "'":
            return True  # "''" is a closing quote
        if early:  # detached by the punctuation pass only when a space is already there
            if nxt != "" and nxt in ",:":
                return i + 2 >= n or not text[i + 2].isdecimal()
            return nxt != "" and (nxt in " ;@#$%&?!" or "\u2012" <= nxt <= "\u2015")
        # A quote before a padded character is itself detached (as is "'s", "'m", "'d" before one).
        if nxt != "" and nxt in "sSmMdD" and _pads_before(text, i + 2, early=True):
            return True
        return _pads_before(text, i + 1, early=True)
    return False


def _ends_contraction(text: str, start: int, word: str) -> bool:
    """Whether the run ``word`` at ``start`` is the tail of ``more'n`` or ``d'ye`` (which NLTK respaces)."""
    low = word.lower()
    head = {"n": "more", "ye": "d"}.get(low)
    if head is None or start < len(head) + 1 or text[start - 1] != "'":
        return False
    begin = start - 1 - len(head)
    return text[begin:start - 1].lower() == head and (begin == 0 or not _WORD.match(text[begin - 1]))


def tokenize(text: str) -> list[str]:
    """``\\w+`` tokens of ``text`` as CrossCodeEval's ``tokenize_nltk`` yields them (same tokens, same order)."""
    if "'" not in text and not _SPLIT_WORDS.search(text):
        return _WORD.findall(text)  # no contraction can apply: most code takes this path
    out: list[str] = []
    append = out.append
    prev_end = -2
    # What NLTK put right after the previous run: "" nothing, "c2" a space from a contraction split (enables a
    # following "'tis"/"'twas"), "tis" a space from a "'tis" split (enables only a following "'twas").
    prev_space = ""
    for m in _WORD.finditer(text):
        word = m.group()
        start, end = m.span()
        # "don't": the run "don" is followed by "'t"; NLTK cuts "n't" off "do" (first: the other rules see "do").
        n_t = (
            len(word) >= 2
            and word[-1] in "nN"
            and text.startswith("'t" if word[-1] == "n" else "'T", end)
            and _pads_before(text, end + 2)
        )
        head = word[:-1] if n_t else word
        low = head.lower()
        space = ""
        # "'tis" / "'twas" are split only where the quote follows a contraction NLTK has already respaced
        # (otherwise its opening-quote rule detaches the quote first).
        if (
            low in ("tis", "twas")
            and start == prev_end + 1
            and text[prev_end] == "'"
            and (prev_space == "c2" or (prev_space == "tis" and low == "twas"))
        ):
            append(head[:1])
            append(head[1:])
            space = "tis" if low == "tis" else ""
        else:
            cut = _WHOLE_WORD_SPLITS.get(low)
            if cut is None and low == "wanna" and (n_t or _pads_before(text, end)):
                cut = 3
            if cut is not None:
                append(head[:cut])
                append(head[cut:])
                space = "c2"
            else:
                append(head)
                if not n_t and start and text[start - 1] == "'" and _ends_contraction(text, start, word):
                    space = "c2"
        if n_t:
            append(word[-1])
            space = ""
        prev_end, prev_space = end, space
    return out
