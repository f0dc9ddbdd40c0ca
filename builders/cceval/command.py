"""``benchsmith build cceval`` / ``build-ccEval``."""

from __future__ import annotations

import argparse
import datetime as _dt
import sys

from benchsmith.executors import ExecutorKind
from benchsmith.confine import DEFAULT_MEMORY_MB
from benchsmith.records import ReferenceKind
from benchsmith.builders.cceval.records import CursorRule
from benchsmith.runner import ToolchainBackend


def _date(text: str) -> _dt.date:
    try:
        return _dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date; use YYYY-MM-DD") from None


def _kinds(text: str) -> tuple[ReferenceKind, ...]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    try:
        return tuple(sorted({ReferenceKind(n) for n in names}, key=list(ReferenceKind).index))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown reference kind in {text!r}; known: {', '.join(k.value for k in ReferenceKind)}") from None


def _size(text: str) -> int:
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    t = text.strip().lower().removesuffix("b")
    try:
        return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 1000000, 500k, 1M)") from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number >= 1")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    from benchsmith.analyzers import languages
    from benchsmith.builders.cceval.screens import ScreenProfile

    p.add_argument("--lang", "--language", dest="lang", required=True, choices=languages(),
                   help="language of the analyzer to run")
    p.add_argument("--repo", action="append", default=[], metavar="PATH_OR_URL",
                   help="a local directory, a git URL (URL@COMMIT pins a commit), a .tar.gz/.zip archive or a "
                        "registry source (pypi:NAME[==V], npm:NAME[@V], debian:SOURCE[=V], each [#SUBDIR]); repeatable")
    p.add_argument("--repos-file", metavar="FILE", help="one repository per line (# comments)")
    p.add_argument("--output", "-o", required=True, metavar="DIR", help="output directory (DIR/<lang>/...)")
    g = p.add_argument_group("repository filters (off by default; the paper: permissive, 10-50 files, < 1 MB)")
    g.add_argument("--permissive-license", action="store_true", help="keep MIT/Apache-2.0/BSD/ISC/... only")
    g.add_argument("--created-after", type=_date, metavar="YYYY-MM-DD",
                   help="first commit (a registry source: first release) on or after this date")
    g.add_argument("--released-after", type=_date, metavar="YYYY-MM-DD",
                   help="a registry source's version published on or after this date (others: release_date_unknown)")
    g.add_argument("--min-files", type=int)
    g.add_argument("--max-files", type=int)
    g.add_argument("--max-repo-bytes", type=_size, help="total size of the repository's source files")
    g.add_argument("--max-file-bytes", type=_size, default=1_000_000, help="larger files are excluded (default 1M)")
    g.add_argument("--max-file-lines", type=int, default=20_000)
    f = p.add_argument_group("example filters")
    f.add_argument("--min-tokens", type=int, default=3)
    f.add_argument("--max-tokens", type=int, default=30)
    f.add_argument("--min-prompt-lines", type=int, default=5)
    f.add_argument("--no-dedup", action="store_true")
    f.add_argument("--no-leakage-filter", action="store_true")
    f.add_argument("--first-reference-per-statement", action="store_true",
                   help="one example per statement, at its first cross-file reference (the earlier rule; default: "
                        "every reference, as CrossCodeEval's released data)")
    f.add_argument("--cursor", default=CursorRule.NAME.value, choices=[m.value for m in CursorRule],
                   help="name: the cursor right before the cross-file name (default: each example tests the API); "
                        "released: where the released CrossCodeEval puts it per language, drawn with --seed "
                        "(comparable with published numbers)")
    f.add_argument("--kinds", type=_kinds, metavar="KINDS",
                   help="comma list of reference kinds to cut (default: all): "
                        + ",".join(k.value for k in ReferenceKind))
    f.add_argument("--keep-unscorable", action="store_true",
                   help="keep examples whose exact groundtruth the scorers cannot give full marks (to measure them)")
    f.add_argument("--max-per-repo", type=int, help="sample at most N examples per repository (seeded)")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--screens", default=ScreenProfile.DEFAULT.value, choices=[m.value for m in ScreenProfile],
                   metavar="PROFILE",
                   help="model-free predictability screens: default (the precise ones), strict (all), none (the "
                        "paper's filters only, for replication); see builders/cceval/screens.py")
    r = p.add_argument_group("cross-file context retrieval")
    r.add_argument("--retrievers", default="bm25", help="comma list of bm25,jaccard,dense or 'none' (default bm25)")
    r.add_argument("--top-k", type=int, default=5)
    r.add_argument("--window", type=int, default=10, help="non-empty lines per chunk")
    r.add_argument("--stride", type=int, help="sliding-window stride (default: non-overlapping)")
    r.add_argument("--dense-model", help="local path of an embedding model for the dense retriever")
    r.add_argument("--next-chunk", action="store_true", help="also return the chunk that follows each hit")
    r.add_argument("--definition-context", action="store_true",
                   help="also write line_completion_oracle_definition.jsonl: each example's definition "
                        "(metadata.definition) as its cross-file context, the bound of what retrieval could give")
    x = p.add_argument_group("execution")
    x.add_argument("--workers", type=_positive, help="parallel repositories (default: all cores)")
    x.add_argument("--executor", type=ExecutorKind, choices=list(ExecutorKind), default=ExecutorKind.LOCAL)
    x.add_argument("--ray-address", help="address of a running Ray cluster (default: start a local one)")
    # --backend is the deprecated spelling: it means a model or a sandbox in other commands
    x.add_argument("--toolchain-backend", "--backend", dest="toolchain_backend", type=ToolchainBackend,
                   choices=list(ToolchainBackend), default=ToolchainBackend.LOCAL,
                   help="run toolchains locally or in the containers/ images (--backend: deprecated alias)")
    x.add_argument("--timeout", type=float, default=900.0, help="seconds per whole-tree toolchain run")
    x.add_argument("--toolchain-memory-mb", type=_positive, default=DEFAULT_MEMORY_MB,
                   help=f"memory limit of each toolchain run, its whole process tree (default {DEFAULT_MEMORY_MB}); "
                        "a run over it is recorded as toolchain_memory_limit")
    x.add_argument("--allow-unconfined", action="store_true",
                   help="run toolchains unconfined where this machine cannot confine them (not root, no namespaces) "
                        "instead of refusing; only for repositories you trust")
    x.add_argument("--force", action="store_true", help="rebuild finished repositories (default: resume)")
    x.add_argument("--resume", action="store_true", help="skip repositories finished earlier (the default)")
    x.add_argument("--format", default="jsonl", help="comma list of jsonl,hf,parquet")
    x.add_argument("--push-to-hub", metavar="REPO", help="push the HF dataset to the hub (needs a token)")
    x.add_argument("--no-card", action="store_true", help="do not write the dataset card DIR/README.md")
    x.add_argument("--quiet", "-q", action="store_true")


def config_from_args(args: argparse.Namespace):
    from benchsmith.builders.cceval.config import BuildConfig
    from benchsmith.builders.cceval.filters import ExampleFilterConfig
    from benchsmith.builders.cceval.screens import ScreenProfile
    from benchsmith.files import FileLimits
    from benchsmith.sources import RepoFilterConfig, read_specs

    try:
        specs = read_specs(args.repo, args.repos_file)
    except OSError as exc:
        raise SystemExit(f"build cceval: cannot read --repos-file {args.repos_file}: {exc.strerror or exc}") from None
    if not specs:
        raise SystemExit("build cceval: give at least one --repo or a --repos-file")
    retrievers = () if args.retrievers.strip().lower() == "none" else tuple(
        r.strip() for r in args.retrievers.split(",") if r.strip())
    retrieval = {"top_k": args.top_k, "window": args.window, "stride": args.stride,
                 "return_next_chunk": args.next_chunk, "dense_model": args.dense_model,
                 "definition_context": args.definition_context}
    return BuildConfig(
        language=args.lang,
        output=args.output,
        repos=specs,
        repo_filters=RepoFilterConfig(args.permissive_license, args.created_after, args.min_files, args.max_files,
                                      args.max_repo_bytes, args.released_after),
        file_limits=FileLimits(max_bytes=args.max_file_bytes, max_lines=args.max_file_lines),
        example_filters=ExampleFilterConfig(args.min_tokens, args.max_tokens, args.min_prompt_lines,
                                            not args.no_dedup, not args.no_leakage_filter,
                                            scorable=not args.keep_unscorable),
        backend=args.toolchain_backend,
        timeout=args.timeout,
        toolchain_memory_mb=args.toolchain_memory_mb,
        allow_unconfined=args.allow_unconfined,
        retrievers=retrievers,
        retrieval=retrieval,
        screens=ScreenProfile(args.screens),
        max_per_repo=args.max_per_repo,
        seed=args.seed,
        first_reference_per_statement=args.first_reference_per_statement,
        cursor=CursorRule(args.cursor),
        kinds=args.kinds,
        workers=args.workers,
        executor=args.executor,
        ray_address=args.ray_address,
        force=args.force,
    )


def run(args: argparse.Namespace) -> int:
    from benchsmith.builders.cceval.build import build, print_summary
    from benchsmith.repobuild.scratch import lang_dir
    from benchsmith.builders.cceval.derived import write_derived

    config = config_from_args(args)
    if config.backend is ToolchainBackend.LOCAL:
        from benchsmith.confine import ConfinementUnavailable
        from benchsmith.runner import require_confinement

        try:
            require_confinement(config.allow_unconfined)
        except ConfinementUnavailable as exc:
            print(f"build-ccEval: {exc}", file=sys.stderr)
            return 2
    _check_output(lang_dir(config))
    summary = build(config, progress=not args.quiet)
    command = getattr(args, "_command_line", None) or ["build-ccEval"]
    write_derived(args.output, command=command, formats=args.format.split(","), card=not args.no_card,
                  tool_versions=summary.stats.get("tool_versions", {}), push_to_hub=args.push_to_hub,
                  language_dirs=[summary.output_dir])
    if not args.quiet:
        print_summary(summary)
    failed = [s for s in summary.shards if s.status != "ok"]
    if summary.shards and len(failed) == len(summary.shards):
        print(f"build cceval: every repository failed or was excluded ({len(failed)}); nothing was built -- see "
              f"{summary.output_dir / 'excluded.jsonl'}", file=sys.stderr)
        return 1
    return 0


def _check_output(directory) -> None:
    """An output directory we cannot create or write is one clear line, before any work is done."""
    import os

    try:
        os.makedirs(directory, exist_ok=True)
        probe = directory / f".write-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise SystemExit(f"build cceval: cannot write to --output {directory}: {exc.strerror or exc}") from None
