"""Dataset outputs made from the JSONL files on disk, whoever wrote them.

``DIR/<lang>/line_completion*.jsonl`` (CrossCodeEval) and ``DIR/humanext/*.jsonl`` (HumanExtension) become:

* ``DIR/hf/``: a Hugging Face ``DatasetDict`` (``save_to_disk``) with one split per language and setting
  (``python_line_completion_rg1_bm25``, ``humanext_<file>``) and explicit ``Features``;
* ``DIR/parquet/<lang>/<name>.parquet``: one parquet file per JSONL file;
* ``push_to_hub(DIR/hf, repo_id)``: the real upload, for users with a token (with the dataset card).

Features are written out explicitly: CrossCodeEval's schema is fixed (so a split with no examples, or a field
that happens to be null everywhere, keeps its type) and any extra field is typed from the records, a type clash
naming the file, line and field.  Same JSONL in, same bytes out: fingerprints are content hashes, not random.
"""

from __future__ import annotations

import argparse
import enum
import hashlib
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from benchsmith.jsonio import JsonlError, read_jsonl
from benchsmith.enums import StrEnum

HF_DIR = "hf"
PARQUET_DIR = "parquet"
HUMANEXT_DIR = "humanext"
_SHARD_BYTES = 500 * 1024 * 1024
_NOT_LANGUAGES = {HF_DIR, PARQUET_DIR, HUMANEXT_DIR, "figures"}


class OutputFormat(StrEnum):
    JSONL = "jsonl"
    HF = "hf"
    PARQUET = "parquet"


class Family(str, enum.Enum):
    CCEVAL = "cceval"
    HUMANEXT = "humanext"


@dataclass(frozen=True)
class SplitSource:
    name: str  # split name: <lang>_<file stem> or humanext_<file stem>
    path: Path
    family: Family
    group: str  # language, or "humanext"


@dataclass
class OutputSummary:
    counts: dict[str, int] = field(default_factory=dict)  # split -> records
    paths: dict[str, Path] = field(default_factory=dict)  # format -> where it was written
    hub_url: str | None = None


class SchemaError(ValueError):
    pass


# ------------------------------------------------------------------------------------------ type trees
# A JSON type tree: "string" | "int64" | "float64" | "bool" | "null" | ("list", tree) | ("dict", {key: tree}).

_SCALARS = {str: "string", bool: "bool", int: "int64", float: "float64"}

CCEVAL_SCHEMA: Any = ("dict", {
    "prompt": "string",
    "groundtruth": "string",
    "right_context": "string",
    "metadata": ("dict", {
        "task_id": "string",
        "repository": "string",
        "file": "string",
        "context_start_lineno": "int64",
        "groundtruth_start_lineno": "int64",
        "right_context_start_lineno": "int64",
    }),
    "crossfile_context": ("dict", {
        "text": "string",
        "list": ("list", ("dict", {"retrieved_chunk": "string", "filename": "string", "score": "float64"})),
    }),
})


def type_of(value: Any, where: str = "") -> Any:
    if value is None:
        return "null"
    for py, name in _SCALARS.items():
        if type(value) is py:
            return name
    if isinstance(value, list):
        tree: Any = "null"
        for i, item in enumerate(value):
            tree = merge_types(tree, type_of(item, f"{where}[]"), f"{where}[]")
        return ("list", tree)
    if isinstance(value, dict):
        return ("dict", {k: type_of(v, f"{where}.{k}" if where else k) for k, v in value.items()})
    raise SchemaError(f"field {where or '<record>'}: unsupported JSON value {type(value).__name__}")


def merge_types(a: Any, b: Any, where: str = "") -> Any:
    if a == "null":
        return b
    if b == "null" or a == b:
        return a
    if a in ("int64", "float64") and b in ("int64", "float64"):
        return "float64"  # JSON writes 1.0 as 1 in some producers: a number column is a float column
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "list":
        return ("list", merge_types(a[1], b[1], f"{where}[]"))
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "dict":
        keys = dict(a[1])
        for k, v in b[1].items():
            sub = f"{where}.{k}" if where else k
            keys[k] = merge_types(keys[k], v, sub) if k in keys else v
        return ("dict", keys)
    raise SchemaError(f"field {where or '<record>'} is {_describe(b)} here but {_describe(a)} elsewhere")


def _describe(tree: Any) -> str:
    return tree if isinstance(tree, str) else ("a list" if tree[0] == "list" else "an object")


def _feature(tree: Any):
    import datasets

    if isinstance(tree, str):
        # A field that is null everywhere is typed string: a nullable string reads back as None.
        return datasets.Value("string" if tree == "null" else tree)
    if tree[0] == "list":
        return [_feature(tree[1])]
    return {k: _feature(v) for k, v in tree[1].items()}


def features_for(tree: Any):
    import datasets

    if not (isinstance(tree, tuple) and tree[0] == "dict"):
        raise SchemaError("records must be JSON objects")
    return datasets.Features(_feature(tree))


def conform(value: Any, tree: Any) -> Any:
    """Fill missing keys with None and widen ints where the schema says float, so every row fits the Features."""
    if value is None:
        return None
    if tree == "float64" and type(value) is int:
        return float(value)
    if isinstance(tree, tuple) and tree[0] == "list":
        return [conform(v, tree[1]) for v in value]
    if isinstance(tree, tuple) and tree[0] == "dict":
        return {k: conform(value.get(k), sub) for k, sub in tree[1].items()}
    return value


# ------------------------------------------------------------------------------------------ discovery / reading


def _split_name(*parts: str) -> str:
    return re.sub(r"\W+", "_", "_".join(parts)).strip("_")


def discover_splits(out_dir: str | os.PathLike) -> list[SplitSource]:
    """Every ``<lang>/line_completion*.jsonl`` and ``humanext/*.jsonl`` under ``out_dir``, in a stable order."""
    root = Path(out_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such output directory; build the benchmark first")
    found: list[SplitSource] = []
    for lang_dir in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in _NOT_LANGUAGES
                           and not p.name.startswith(".")):
        for path in sorted(lang_dir.glob("line_completion*.jsonl")):
            found.append(SplitSource(_split_name(lang_dir.name, path.stem), path, Family.CCEVAL, lang_dir.name))
    hx = root / HUMANEXT_DIR
    if hx.is_dir():
        for path in sorted(hx.glob("*.jsonl")):
            found.append(SplitSource(_split_name(HUMANEXT_DIR, path.stem), path, Family.HUMANEXT, HUMANEXT_DIR))
    names = [s.name for s in found]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{root}: files map to the same split name {dupes}; rename one of them")
    return found


def read_records(source: SplitSource) -> tuple[list[dict], Any]:
    """The records of one JSONL file and their type tree; errors name the file, line and field."""
    rows: list[dict] = []
    tree: Any = CCEVAL_SCHEMA if source.family is Family.CCEVAL else ("dict", {})
    for lineno, rec in enumerate(read_jsonl(source.path), 1):
        try:
            if source.family is Family.CCEVAL:
                _check_cceval(rec)
            tree = merge_types(tree, type_of(rec))
        except SchemaError as exc:
            raise SchemaError(f"{source.path}: record {lineno}: {exc}") from None
        rows.append(rec)
    return rows, tree


def _check_cceval(rec: dict) -> None:
    missing = [k for k in ("prompt", "groundtruth", "right_context", "metadata") if k not in rec]
    if missing:
        raise SchemaError(f"missing CrossCodeEval field(s) {missing}")
    if not isinstance(rec["metadata"], dict) or "task_id" not in rec["metadata"]:
        raise SchemaError("field metadata must be an object with a task_id")


def _fingerprint(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
        h.update(b"\0")
    return h.hexdigest()[:16]


def build_dataset_dict(sources: Sequence[SplitSource], on_split: Callable[[str], None] | None = None):
    """A ``DatasetDict`` with one split per source.  Splits of one family share one set of Features."""
    import datasets

    loaded: dict[str, tuple[SplitSource, list[dict], Any]] = {}
    family_tree: dict[Family, Any] = {}
    for src in sources:
        rows, tree = read_records(src)
        try:
            family_tree[src.family] = merge_types(family_tree.get(src.family, "null"), tree)
        except SchemaError as exc:
            raise SchemaError(f"{src.path}: differs from the other {src.family.value} files: {exc}") from None
        loaded[src.name] = (src, rows, tree)
    splits = {}
    for name, (src, rows, _) in loaded.items():
        tree = family_tree[src.family]
        feats = features_for(tree)
        rows = [conform(r, tree) for r in rows]
        # from_dict, not from_list: a split without records still gets every column.
        ds = datasets.Dataset.from_dict({k: [r[k] for r in rows] for k in feats}, features=feats)
        digest = _fingerprint(name.encode(), src.path.read_bytes(), repr(tree).encode())
        # A content hash instead of datasets' random fingerprint: state.json is then byte-stable.
        ds = datasets.Dataset(ds.data, info=ds.info, split=datasets.NamedSplit(name), fingerprint=digest)
        splits[name] = ds
        if on_split is not None:
            on_split(name)
    return datasets.DatasetDict(splits)


# ------------------------------------------------------------------------------------------ writers


def _replace_dir(tmp: Path, final: Path) -> None:
    if final.exists():
        old = final.with_name(f".{final.name}.old")
        if old.exists():
            shutil.rmtree(old)
        final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old)
    else:
        tmp.rename(final)


def write_outputs(
    out_dir: str | os.PathLike,
    formats: Iterable[str] = ("jsonl", "hf", "parquet"),
    *,
    push_to_hub: str | None = None,
    token: str | None = None,
    on_split: Callable[[str], None] | None = None,
) -> OutputSummary:
    """Write the requested formats from the JSONL files under ``out_dir`` (``jsonl``: check they all read back).
    Each format is written to a temporary directory and swapped in whole, so a failure never leaves half a
    dataset next to a good one.  ``push_to_hub="user/name"`` then uploads ``DIR/hf`` (written for it if not
    asked for) with ``DIR/README.md`` as its card when that exists: write the card first."""
    kinds = []
    formats = list(formats) + (["hf"] if push_to_hub else [])
    for f in dict.fromkeys(formats):
        try:
            kinds.append(OutputFormat(str(f)))
        except ValueError:
            raise ValueError(f"unknown output format {f!r}; choose from jsonl, hf, parquet") from None
    root = Path(out_dir)
    sources = discover_splits(root)
    if not sources:
        raise FileNotFoundError(
            f"{root}: no <language>/line_completion*.jsonl or humanext/*.jsonl files; build the benchmark first"
        )
    summary = OutputSummary()
    if OutputFormat.HF not in kinds and OutputFormat.PARQUET not in kinds:
        for src in sources:  # jsonl only: just prove every file reads back
            summary.counts[src.name] = len(read_records(src)[0])
        summary.paths["jsonl"] = root
        return summary
    dd = build_dataset_dict(sources, on_split=on_split)
    summary.counts = {name: ds.num_rows for name, ds in dd.items()}
    if OutputFormat.JSONL in kinds:
        summary.paths["jsonl"] = root
    if OutputFormat.HF in kinds:
        tmp = root / f".{HF_DIR}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        # At least one shard per split: datasets saves an empty split as zero shards and then cannot load it.
        shards = {name: max(1, -(-ds.data.nbytes // _SHARD_BYTES)) for name, ds in dd.items()}
        dd.save_to_disk(str(tmp), num_shards=shards)
        _replace_dir(tmp, root / HF_DIR)
        summary.paths["hf"] = root / HF_DIR
    if OutputFormat.PARQUET in kinds:
        tmp = root / f".{PARQUET_DIR}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        for src in sources:
            target = tmp / src.group / f"{src.path.stem}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            dd[src.name].to_parquet(str(target))
        _replace_dir(tmp, root / PARQUET_DIR)
        summary.paths["parquet"] = root / PARQUET_DIR
    if push_to_hub:
        summary.hub_url = _push(root / HF_DIR, push_to_hub, token=token)
    return summary


def push_to_hub(dataset_dir: str | os.PathLike, repo_id: str, token: str | None = None, private: bool = True,
                card: str | os.PathLike | None = None) -> str:
    """Upload ``dataset_dir`` (a saved DatasetDict) to the Hub as ``repo_id``; returns the dataset's URL."""
    return _push(dataset_dir, repo_id, token=token, private=private, card=card)


def _push(dataset_dir: str | os.PathLike, repo_id: str, token: str | None = None, private: bool = True,
          card: str | os.PathLike | None = None) -> str:
    """Upload a ``save_to_disk`` DatasetDict to the Hub (needs a token with write access: ``token`` or the
    ``HF_TOKEN`` / ``huggingface-cli login`` credentials) and replace the generated card's text with ours
    (``card``, default: ``README.md`` beside ``dataset_dir``), keeping the Hub's split configuration."""
    path = Path(dataset_dir)
    if not (path / "dataset_dict.json").is_file():
        raise FileNotFoundError(f"{path} is not a saved DatasetDict (no dataset_dict.json); run write_outputs first")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo_id):
        raise ValueError(f"repo_id {repo_id!r} must look like 'user-or-org/dataset-name'")
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        raise RuntimeError("HF_HUB_OFFLINE=1 is set: unset it to push to the Hub")
    import datasets
    from huggingface_hub import DatasetCard

    dd = datasets.load_from_disk(str(path))
    dd.push_to_hub(repo_id, token=token, private=private)
    card_path = Path(card) if card is not None else path.parent / "README.md"
    if card_path.is_file():
        ours = DatasetCard(card_path.read_text(encoding="utf-8"))
        hub = DatasetCard.load(repo_id, token=token, repo_type="dataset")
        for key, value in hub.data.to_dict().items():
            if key not in ours.data:
                ours.data[key] = value  # the Hub's configs/dataset_info: how it finds our custom split names
        ours.push_to_hub(repo_id, token=token, repo_type="dataset")
    return f"https://huggingface.co/datasets/{repo_id}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchsmith.builders.cceval.writers",
                                     description="Write HF datasets / parquet from a build's JSONL files.")
    parser.add_argument("out_dir")
    parser.add_argument("--formats", nargs="+", default=["jsonl", "hf", "parquet"], choices=[f.value for f in OutputFormat])
    parser.add_argument("--push", metavar="REPO_ID", help="also upload DIR/hf to the Hugging Face Hub")
    parser.add_argument("--public", action="store_true", help="create the Hub dataset public (default: private)")
    args = parser.parse_args(argv)
    try:
        summary = write_outputs(args.out_dir, args.formats)
    except (OSError, ValueError, JsonlError) as exc:
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
        console.print(push_to_hub(Path(args.out_dir) / HF_DIR, args.push, private=not args.public))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
