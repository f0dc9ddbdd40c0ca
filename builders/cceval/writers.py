"""The command line of the export (``benchsmith/export.py``): HF datasets / parquet from a build's JSONL files.

    python -m benchsmith.builders.cceval.writers DIR [--formats jsonl hf parquet] [--push REPO_ID [--public]]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from benchsmith import layout
from benchsmith.export import OutputFormat, push_to_hub, write_outputs
from benchsmith.jsonio import JsonlError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchsmith.builders.cceval.writers",
                                     description="Write HF datasets / parquet from a build's JSONL files.")
    parser.add_argument("out_dir")
    parser.add_argument("--formats", nargs="+", default=[f.value for f in OutputFormat],
                        choices=[f.value for f in OutputFormat])
    parser.add_argument("--push", metavar="REPO_ID", help="also upload DIR/hf to the Hugging Face Hub")
    parser.add_argument("--public", action="store_true", help="create the Hub dataset public (default: private)")
    args = parser.parse_args(argv)
    try:
        summary = write_outputs(args.out_dir, args.formats)
    except (OSError, ValueError, RuntimeError, JsonlError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from rich.console import Console
    from rich.table import Table

    table = Table("split", "records", title=f"{args.out_dir}")
    for name, n in summary.counts.items():
        table.add_row(name, str(n))
    console = Console()
    console.print(table)
    for fmt, where in summary.paths.items():
        console.print(f"{fmt}: {where}")
    if args.push:
        console.print(push_to_hub(Path(args.out_dir) / layout.HF_DIR, args.push, private=not args.public))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
