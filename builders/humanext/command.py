"""``benchsmith build humanext``: write every prompt variant of the HumanExtension study.

Examples::

    benchsmith build humanext --output out                        # the embedded demo pairs
    benchsmith build humanext --pairs /path/to/data.json --output out --seed 1 --format jsonl,parquet
    benchsmith build humanext --pairs hf:sh0416/humanextension@<sha> --output out
    benchsmith build humanext --pairs my_pairs.jsonl --settings oracle --perturbations none,renamed --samples 5
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchsmith.evaluate.humanext.records import Perturbation, Setting

SETTINGS = [s.value for s in Setting]
PERTURBATIONS = [p.value for p in Perturbation]


def _csv(choices: list[str]):
    def parse(text: str) -> list[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"{','.join(bad) or text!r}: choose from {','.join(choices)}")
        return list(dict.fromkeys(items))

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pairs", default=None, metavar="SOURCE",
                        help="data.json (authors' release), a JSONL of pairs (our schema), hf:NAME[@REVISION], "
                             "or 'demo' (default: the embedded demo pairs)")
    parser.add_argument("--output", required=True, type=Path, metavar="DIR", help="writes DIR/humanext/")
    parser.add_argument("--settings", type=_csv(SETTINGS), default=SETTINGS,
                        help=f"comma-separated (default: all of {','.join(SETTINGS)})")
    parser.add_argument("--perturbations", type=_csv(PERTURBATIONS), default=PERTURBATIONS,
                        help="perturbations of the auxiliary in the oracle setting (default: all)")
    parser.add_argument("--samples", type=int, default=1,
                        help="random draws per pair for irrelevant, multi_auxiliary, renamed, dead_code (default 1)")
    parser.add_argument("--num-auxiliary", type=int, default=9, help="functions in multi_auxiliary (default 9)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pool", default="auto",
                        help="auxiliary pool: auto | humaneval | pairs | PATH (HumanEval schema .jsonl[.gz])")
    parser.add_argument("--prompt-style", choices=["base", "codellama-instruct", "chat"], default="base")
    parser.add_argument("--tokenizer", default=None, metavar="PATH",
                        help="a Hugging Face tokenizer directory whose chat template renders the prompts "
                             "(implies --prompt-style chat)")
    parser.add_argument("--keep-invalid", action="store_true",
                        help="also write variants of pairs whose reference fails its own tests")
    parser.add_argument("--check-variants", action="store_true",
                        help="run every variant with the human reference completion in the sandbox")
    parser.add_argument("--format", default="jsonl", type=_csv(["jsonl", "hf", "parquet"]),
                        help="comma-separated output formats: jsonl,hf,parquet (default jsonl)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per sandboxed run (default 10)")
    parser.add_argument("--workers", type=int, default=None, help="parallel sandboxed runs (default: CPU count)")
    parser.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from benchsmith.jsonio import JsonlError

    from .build import BuildOptions, build, write_report
    from .prompts import PromptStyle
    from .render import PairFormatError
    from .settings import VariantConfig

    style = PromptStyle("chat" if args.tokenizer else args.prompt_style)
    try:
        config = VariantConfig(
            settings=tuple(Setting(s) for s in args.settings),
            perturbations=tuple(Perturbation(p) for p in args.perturbations),
            samples=args.samples, num_auxiliary=args.num_auxiliary, seed=args.seed,
        )
        opts = BuildOptions(
            output=args.output, pairs=args.pairs, config=config, pool=args.pool, style=style,
            tokenizer=args.tokenizer, keep_invalid=args.keep_invalid, check_variants=args.check_variants,
            formats=tuple(args.format), timeout=args.timeout, workers=args.workers,
            progress=not args.no_progress,
        )
        result = build(opts)
    except (PairFormatError, JsonlError, FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"benchsmith build humanext: {exc}", file=sys.stderr)
        return 2
    write_report(result)
    return 0
