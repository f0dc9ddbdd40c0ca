"""Speed of the compat CrossCodeEval scorer against the released approach, on the 600 golden cases.

Baseline ("released approach"): written here from the released scorer's documented behaviour -- for Python it
re-parses ``prompt + completion[:i+1]`` for every character ``i`` with a fresh parse and walks every node of
each tree recursively looking for ERROR; the other steps (terminator scan, regex comment removal, regex
identifiers, difflib ratio) are the same cheap steps in both. Both run single-process on the same machine with
the same tree-sitter grammar, so the ratio measures the algorithm.

Checks that both give identical per-example values and aggregates, then prints the timings and the speedup.

    .venv/bin/python bench/score.py [--cases PATH] [--repeat N]
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import sys
import time
from pathlib import Path

from benchsmith.evaluate.cceval import compat
from benchsmith.evaluate.cceval.scoring import Language, Mode, aggregate, identifier_match, score_example
from benchsmith.evaluate.cceval.common import ExampleScore, exact_match, keywords, parser

DEFAULT_CASES = Path(__file__).resolve().parents[1].parent / "shared/data/cceval-metrics/cases.jsonl"


# ---- baseline: the released algorithm, character by character ------------------------------------------------


class ReleasedApproach:
    def __init__(self) -> None:
        self.parser = parser(Language.PYTHON)
        self.parses = 0

    def _has_error(self, node) -> bool:
        if node.type == "ERROR":
            return True
        try:
            for child in node.children:
                if self._has_error(child):
                    return True
        except RecursionError:
            return True
        return False

    def _valid(self, code: str) -> bool:
        self.parses += 1
        tree = self.parser.parse(bytes(code, "utf8"))
        return not self._has_error(tree.root_node)

    def python_statement(self, prompt: str, completion: str) -> str:
        try:
            for i in range(len(completion)):
                if not self._valid(prompt + completion[: i + 1]):
                    continue
                if completion[i + 1] == "\n":
                    return completion[: i + 1].rstrip()
            return completion
        except Exception:  # IndexError past the end, as in the released code
            return completion

    @staticmethod
    def bracket_statement(completion: str) -> str:
        end = None
        for i, ch in enumerate(completion):
            if ch in (";", "}", "{"):
                end = i
                break
        return completion[: end + 1] if end else completion

    @staticmethod
    def remove_comments(code: str) -> str:
        return re.sub(r"//.*", "", re.sub(r"#.*", "", code))

    @staticmethod
    def identifiers(code: str, lang: Language) -> list[str]:
        no_strings = re.sub(r'"([^"\\]*(\\.[^"\\]*)*)"|\'([^\'\\]*(\\.[^\'\\]*)*)\'', "", code)
        kw = keywords(lang)
        return [t for t in re.findall(r"\w+", no_strings) if re.match(r"[_a-zA-Z][_a-zA-Z0-9]*", t) and t not in kw]

    @staticmethod
    def ratio(pred: str, target: str) -> float:
        pred, target = pred.strip(), target.strip()
        if pred == target:
            return 100.0
        if not pred or not target:
            return 0.0
        return float(int(round(100 * difflib.SequenceMatcher(None, pred, target).ratio())))

    def score(self, case: dict) -> ExampleScore:
        lang = Language.parse(case["language"])
        if lang is Language.PYTHON:
            processed = self.python_statement(case["prompt"], case["prediction"])
        else:
            processed = self.bracket_statement(case["prediction"])
        pred = self.remove_comments(processed)
        target = self.remove_comments(case["groundtruth"])
        pred_ids, target_ids = self.identifiers(pred, lang), self.identifiers(target, lang)
        id_em, p, r, f1 = identifier_match(pred_ids, target_ids)
        return ExampleScore(case["task_id"], pred, target, pred_ids, target_ids, exact_match(pred, target),
                            self.ratio(pred, target), id_em, p, r, f1, processed)


# ---- measurement ------------------------------------------------------------------------------------------------


def _fields(s: ExampleScore) -> str:
    return json.dumps([s.pred_postprocessed, s.pred, s.target, s.pred_ids, s.target_ids, s.em, s.es, s.id_em,
                       s.id_precision, s.id_recall, s.id_f1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of ours (the median is reported)")
    args = ap.parse_args(argv)
    if not args.cases.is_file():
        print(f"golden cases not found: {args.cases}", file=sys.stderr)
        return 2
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines()]
    py_cases = [c for c in cases if c["language"] == "python"]

    def ours_all() -> list[ExampleScore]:
        # Time the real work: the statement-cut cache must not carry over between timed runs.
        compat.postprocess_code_lines.cache_clear()
        return [score_example(c["task_id"], c["prompt"], c["groundtruth"], c["prediction"],
                              Language.parse(c["language"]), Mode.COMPAT) for c in cases]

    ours_all()  # warm-up: load grammars and keyword lists outside the timing
    ours_times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        ours = ours_all()
        ours_times.append(time.perf_counter() - t0)
    compat.postprocess_code_lines.cache_clear()
    t0 = time.perf_counter()
    ours_py = [score_example(c["task_id"], c["prompt"], c["groundtruth"], c["prediction"], Language.PYTHON, Mode.COMPAT)
               for c in py_cases]
    ours_py_time = time.perf_counter() - t0

    baseline = ReleasedApproach()
    baseline.score(cases[0])
    baseline.parses = 0
    t0 = time.perf_counter()
    theirs = [baseline.score(c) for c in cases]
    base_time = time.perf_counter() - t0
    base_parses = baseline.parses
    t0 = time.perf_counter()
    theirs_py = [baseline.score(c) for c in py_cases]
    base_py_time = time.perf_counter() - t0

    # Parse count of ours (untimed pass with a counting wrapper): a load-independent view of the saving.
    cutter = compat._python_cutter()
    real_parser = cutter._parser

    class Counting:
        n = 0

        def parse(self, data):
            Counting.n += 1
            return real_parser.parse(data)

    cutter._parser = Counting()
    compat.postprocess_code_lines.cache_clear()
    try:
        ours_all()
    finally:
        cutter._parser = real_parser
    ours_parses = Counting.n

    mismatches = [a.task_id for a, b in zip(ours, theirs) if _fields(a) != _fields(b)]
    mismatches += [a.task_id for a, b in zip(ours_py, theirs_py) if _fields(a) != _fields(b)]
    by_lang_ours: dict[str, list] = {}
    by_lang_theirs: dict[str, list] = {}
    for c, a, b in zip(cases, ours, theirs):
        by_lang_ours.setdefault(c["language"], []).append(a)
        by_lang_theirs.setdefault(c["language"], []).append(b)
    agg_equal = all(aggregate(by_lang_ours[l]) == aggregate(by_lang_theirs[l]) for l in by_lang_ours)

    ours_t = statistics.median(ours_times)
    print(f"cases: {len(cases)} ({len(py_cases)} python); Python parses per full pass: ours {ours_parses}, released approach {base_parses}")
    print(f"identical per-example values: {not mismatches} ({len(mismatches)} mismatches)  aggregates equal: {agg_equal}")
    print(f"all 600   ours (compat) {ours_t:8.3f} s   released approach {base_time:8.3f} s   speedup {base_time / ours_t:6.1f}x")
    print(f"python    ours (compat) {ours_py_time:8.3f} s   released approach {base_py_time:8.3f} s   speedup {base_py_time / ours_py_time:6.1f}x")
    return 0 if not mismatches and agg_equal else 1


if __name__ == "__main__":
    sys.exit(main())
