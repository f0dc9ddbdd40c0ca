"""Hugging Face ``datasets`` and parquet views of a build's JSONL files, for every benchmark family.

* ``write_outputs(DIR)``: every split file of every family (``benchsmith.families``: ``DIR/<lang>/...`` or the
  family's own folder) becomes a split of ``DIR/hf/``, a ``DatasetDict`` (``save_to_disk``), named
  ``<group>_<file stem>`` (``python_line_completion_rg1_bm25``, ``humanext_variants``), with explicit ``Features``
  starting from the family's schema, and ``DIR/parquet/<group>/<name>.parquet``, one parquet file per JSONL file;
* ``push_to_hub(DIR/hf, repo_id)``: the real upload, for users with a token (with the dataset card).
  (A family may write views of its own beside these: HumanExtension's flat variant table,
  ``builders/humanext/table.py``.)

Features are written out explicitly: a family's schema is fixed (so a split with no examples, or a field
that happens to be null everywhere, keeps its type) and any extra field is typed from the records, a type clash
naming the file, line and field.  Same JSONL in, same bytes out: fingerprints are content hashes, not random.
Each directory is written beside its final place and swapped in whole, so a failure never leaves half a dataset
next to a good one.  ``datasets`` and ``pyarrow`` are imported only when a view is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from benchsmith import layout
from benchsmith.families import FAMILIES, BenchmarkFamily, families
from benchsmith.enums import StrEnum
from benchsmith.jsonio import read_jsonl
from benchsmith.json_types import SchemaError, conform, features_for, merge_types, type_of

_SHARD_BYTES = 500 * 1024 * 1024
PIP_HF = "pip install 'benchsmith[hf]'"


class OutputFormat(StrEnum):
    JSONL = "jsonl"
    HF = "hf"
    PARQUET = "parquet"


@dataclass(frozen=True)
class SplitSource:
    name: str  # split name: <group>_<file stem>
    path: Path
    family: str  # a benchsmith.families name
    group: str  # the language folder, or the family's own folder


@dataclass
class OutputSummary:
    counts: dict[str, int] = field(default_factory=dict)  # split -> records
    paths: dict[str, Path] = field(default_factory=dict)  # format -> where it was written
    hub_url: str | None = None


def require(module: str, fmt: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError(f"--format {fmt} needs {module.split('.')[0]}: {PIP_HF}") from exc


# ------------------------------------------------------------------------------------------ staging


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


@contextlib.contextmanager
def staged_dir(final: Path) -> Iterator[Path]:
    """A fresh directory beside ``final`` to write into; on success it replaces ``final`` whole."""
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        yield staging / "data"  # a path that does not exist yet: save_to_disk makes it
        _replace_dir(staging / "data", final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def quiet_datasets(datasets) -> Iterator[None]:
    """Our own progress display is rich: keep datasets' bars off stderr while it writes."""
    bars = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if bars:
            datasets.enable_progress_bars()


# ------------------------------------------------------------------------------------------ discovery / reading


def _split_name(*parts: str) -> str:
    return re.sub(r"\W+", "_", "_".join(parts)).strip("_")


def _where(family: BenchmarkFamily) -> str:
    return f"{family.files.folder or '<language>'}/{family.files.glob}"


def discover_splits(out_dir: str | os.PathLike) -> list[SplitSource]:
    """Every split file of every benchmark family under ``out_dir``, family by family, in a stable order."""
    root = Path(out_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such output directory; build the benchmark first")
    found: list[SplitSource] = []
    for family in families():
        for group, path in family.split_paths(root):
            found.append(SplitSource(_split_name(group, path.stem), path, family.name, group))
    names = [s.name for s in found]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{root}: files map to the same split name {dupes}; rename one of them")
    return found


def read_records(source: SplitSource) -> tuple[list[dict], Any]:
    """The records of one JSONL file and their type tree; errors name the file, line and field."""
    rows: list[dict] = []
    family = FAMILIES.load(source.family)
    tree: Any = family.schema
    for lineno, rec in enumerate(read_jsonl(source.path), 1):
        try:
            family.check_record(rec)
            tree = merge_types(tree, type_of(rec))
        except SchemaError as exc:
            raise SchemaError(f"{source.path}: record {lineno}: {exc}") from None
        rows.append(rec)
    return rows, tree


def _fingerprint(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
        h.update(b"\0")
    return h.hexdigest()[:16]


def build_dataset_dict(sources: Sequence[SplitSource], on_split: Callable[[str], None] | None = None):
    """A ``DatasetDict`` with one split per source.  Splits of one family share one set of Features."""
    datasets = require("datasets", OutputFormat.HF.value)

    loaded: dict[str, tuple[SplitSource, list[dict], Any]] = {}
    family_tree: dict[str, Any] = {}
    for src in sources:
        rows, tree = read_records(src)
        try:
            family_tree[src.family] = merge_types(family_tree.get(src.family, "null"), tree)
        except SchemaError as exc:
            raise SchemaError(f"{src.path}: differs from the other {src.family} files: {exc}") from None
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


# ------------------------------------------------------------------------------------------ a build's DIR


def parse_formats(formats: Iterable[str]) -> list[OutputFormat]:
    kinds = []
    for f in dict.fromkeys(formats):
        try:
            kinds.append(OutputFormat(str(f)))
        except ValueError:
            raise ValueError(f"unknown output format {f!r}; choose from jsonl, hf, parquet") from None
    return kinds


def write_outputs(
    out_dir: str | os.PathLike,
    formats: Iterable[str] = ("jsonl", "hf", "parquet"),
    *,
    push_to_hub: str | None = None,
    token: str | None = None,
    on_split: Callable[[str], None] | None = None,
) -> OutputSummary:
    """Write the requested formats from the JSONL files under ``out_dir`` (``jsonl``: check they all read back).
    ``push_to_hub="user/name"`` then uploads ``DIR/hf`` (written for it if not asked for) with ``DIR/README.md``
    as its card when that exists: write the card first."""
    kinds = parse_formats(list(formats) + ([OutputFormat.HF.value] if push_to_hub else []))
    root = Path(out_dir)
    sources = discover_splits(root)
    if not sources:
        raise FileNotFoundError(
            f"{root}: no {' or '.join(_where(f) for f in families())} files; build the benchmark first"
        )
    summary = OutputSummary()
    if OutputFormat.HF not in kinds and OutputFormat.PARQUET not in kinds:
        for src in sources:  # jsonl only: just prove every file reads back
            summary.counts[src.name] = len(read_records(src)[0])
        summary.paths[OutputFormat.JSONL.value] = root
        return summary
    dd = build_dataset_dict(sources, on_split=on_split)
    summary.counts = {name: ds.num_rows for name, ds in dd.items()}
    if OutputFormat.JSONL in kinds:
        summary.paths[OutputFormat.JSONL.value] = root
    if OutputFormat.HF in kinds:
        # At least one shard per split: datasets saves an empty split as zero shards and then cannot load it.
        shards = {name: max(1, -(-ds.data.nbytes // _SHARD_BYTES)) for name, ds in dd.items()}
        with staged_dir(root / layout.HF_DIR) as tmp:
            dd.save_to_disk(str(tmp), num_shards=shards)
        summary.paths[OutputFormat.HF.value] = root / layout.HF_DIR
    if OutputFormat.PARQUET in kinds:
        with staged_dir(root / layout.PARQUET_DIR) as tmp:
            for src in sources:
                target = tmp / src.group / f"{src.path.stem}{layout.PARQUET_SUFFIX}"
                target.parent.mkdir(parents=True, exist_ok=True)
                dd[src.name].to_parquet(str(target))
        summary.paths[OutputFormat.PARQUET.value] = root / layout.PARQUET_DIR
    if push_to_hub:
        summary.hub_url = _push(root / layout.HF_DIR, push_to_hub, token=token)
    return summary


# ------------------------------------------------------------------------------------------ the Hub


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
    datasets = require("datasets", OutputFormat.HF.value)
    from huggingface_hub import DatasetCard

    dd = datasets.load_from_disk(str(path))
    dd.push_to_hub(repo_id, token=token, private=private)
    card_path = Path(card) if card is not None else path.parent / layout.CARD_FILE
    if card_path.is_file():
        ours = DatasetCard(card_path.read_text(encoding="utf-8"))
        hub = DatasetCard.load(repo_id, token=token, repo_type="dataset")
        for key, value in hub.data.to_dict().items():
            if key not in ours.data:
                ours.data[key] = value  # the Hub's configs/dataset_info: how it finds our custom split names
        ours.push_to_hub(repo_id, token=token, repo_type="dataset")
    return f"https://huggingface.co/datasets/{repo_id}"
