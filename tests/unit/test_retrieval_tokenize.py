"""Our tokenizer against NLTK itself: word_tokenize (Punkt sentences + NLTKWordTokenizer), then \\w+ per token.

The reference uses an untrained PunktSentenceTokenizer because the pretrained English model is a data download;
the English model differs from it only in abbreviations/collocations, and the only period contexts that change
\\w+ tokens ("n't." and "wanna.") are never abbreviations.
"""

from __future__ import annotations

import random
import re

import pytest

from benchsmith.builders.cceval.tokenize_code import tokenize

punkt = pytest.importorskip("nltk.tokenize.punkt", reason="nltk is in the retrieval extra")
destructive = pytest.importorskip("nltk.tokenize.destructive", reason="nltk is in the retrieval extra")

_SENTENCES = punkt.PunktSentenceTokenizer()
_WORDS = destructive.NLTKWordTokenizer()


def nltk_tokens(text: str) -> list[str]:
    return [w for s in _SENTENCES.tokenize(text) for tok in _WORDS.tokenize(s) for w in re.findall(r"\w+", tok)]


CODE = '''
def main(argv: list[str]) -> int:
    """Don't run this twice; it can't be undone.  We cannot, won't and shouldn't."""
    # TODO: gonna fix; I wanna know why it doesn't work. It isn't.
    x = {"a": 1, 'b': [2, 3]}  # don't (really)
    if x and not y: return -1
    s = f"{name!r}: {value:>10}" + 'it''s' + "can't"
    print("done...", end='')
    return 0;
}
// C#: var s = $"{a}"; int? n = null; x?.y ?? z; @"verbatim"; #region
/* Javadoc: {@link Foo#bar(int)} <p>isn't</p> */
const t = `template ${x}`; a => b; a!.b; i++; --j; k -= 2;
'''


@pytest.mark.parametrize("text", [
    CODE,
    "I don't. foo", "don't.) x", "don't.;x", "abn't.;!!", "it wanna. Foo", "Cannot cannot CANNOT cannotx",
    "gimme gonna gotta lemme wanna wannabe", "more'n d'ye 'tis gonna'tis", "don't", "DON'T", "Don'T", "x n't y",
    "isn't\n", "isn't,", "isn't:1", "isn't--", "isn't-", "isn't...", "wasn't'", "wasn't's end", "¿Qué? naïve café",
    "", "   \n\t ", "a.b.c n't.x",
])
def test_matches_nltk_on_code_and_contractions(text):
    assert tokenize(text) == nltk_tokens(text)


def test_matches_nltk_on_random_adversarial_text():
    # Pieces chosen to hit every rule that can change \w+ runs: contractions, quotes, periods, padded punctuation.
    pieces = ["don", "n't", "N'T", "'t", "'s", "'m", "'d", "cannot", "Cannot", "wanna", "gonna", "GOTTA", "lemme",
              "gimme", " ", "\n", "\t", ".", "..", ",", ":", "1", "(", ")", "'", '"', "''", "-", "--", "x", "ab", "?",
              "!", ";", "’", "“", "\u2013", "*", ">", "<", "]", "#", "@", "more'n", "d'ye", "'tis", "'twas", "na"]
    rng = random.Random(1234)
    mismatches = []
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        if tokenize(text) != nltk_tokens(text):
            mismatches.append(text)
    assert mismatches == []
