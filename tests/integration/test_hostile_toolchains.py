"""Hostile input for the toolchains themselves, through the real CLI (tests/hostile/toolchains.py): a
repository whose modules shadow every standard-library name, a pylint memory bomb, and a stand-in tsc that does
what a compromised toolchain would (reach a host socket or the network, read /root and /home, write outside its
scratch, fork without end, allocate without end).  Each case ends in its exact recorded verdict, no marker appears,
nothing outside the output directory is written, no toolchain process survives, and a normal repository built
alongside keeps all its examples."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchsmith import confine
from benchsmith.runner import probe_confinement
from benchsmith.analyzers.typescript import TypeScriptAnalyzer
from tests.hostile import adopting_orphans
from tests.timing import scaled
from tests.hostile import toolchain_processes as hostile_toolchain_processes
from tests.hostile import (TOOLCHAIN_ATTACKS, hostile_tsc_package, make_annotation_processor, make_attack_repo,
                           make_memory_bomb, make_stdlib_shadows, tree_digest)

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTROL_PY = REPO_ROOT / "samples" / "python" / "shoplib"
CONTROL_TS = REPO_ROOT / "tests" / "fixtures" / "typescript" / "project"
CAPS = probe_confinement()
pytestmark = pytest.mark.skipif(not CAPS.available, reason=f"this machine cannot confine: {CAPS.missing}")


def cli(*args: str, env: dict | None = None, timeout: float = 600) -> None:
    cmd = [sys.executable, "-m", "benchsmith.cli", "build", "cceval", "--retrievers", "none", "--no-card", "-q",
           *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT,
                         env={**os.environ, **(env or {})})
    assert res.returncode == 0, f"build failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def by_repo(records: list[dict], key: str = "repository") -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in records:
        out.setdefault(r[key] if key in r else r["metadata"]["repository"], []).append(r)
    return out


def toolchain_processes() -> list[int]:
    """Toolchain processes this test process started and that still run (tests/hostile/processes.py)."""
    return hostile_toolchain_processes(with_container_uid=True)


@pytest.fixture(scope="module", autouse=True)
def _own_orphans():
    """Before the module's builds: whatever escapes them is re-parented to us, so it is counted as ours."""
    with adopting_orphans():
        yield


def all_output_text(out: Path) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------------------------------
# the Python analyzer (pylint): standard-library names and a memory bomb


@pytest.fixture(scope="module")
def python_build(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-toolchains-py")
    repos = root / "repos"
    markers = root / "markers"
    shadows = make_stdlib_shadows(repos, markers)
    bomb = make_memory_bomb(repos)
    shutil.copytree(CONTROL_PY, repos / "control")
    before = tree_digest(repos)
    out = root / "out"
    args = ["--lang", "python", "--output", str(out), "--workers", "2", "--toolchain-memory-mb", "1024"]
    for src in (shadows.source, bomb.source, str(repos / "control")):
        args += ["--repo", src]
    cli(*args)
    alone = root / "control-alone"
    cli("--lang", "python", "--output", str(alone), "--repo", str(repos / "control"))
    return root, repos, markers, out / "python", alone / "python", before


def test_no_repository_module_is_imported_whatever_its_name(python_build):
    _root, repos, markers, out, _alone, before = python_build
    assert not list(markers.iterdir()), f"repository code ran: {sorted(p.name for p in markers.iterdir())}"
    assert tree_digest(repos) == before  # nothing written into the repositories
    examples = by_repo(read(out / "line_completion.jsonl"))
    # the shadowing repository's own package still yields its references (the tree stays visible to astroid)
    assert {e["metadata"]["file"] for e in examples["stdlib_shadows"]} == {"pkg/b.py"}
    assert not toolchain_processes()


def test_the_memory_bomb_is_contained_and_recorded(python_build):
    _root, _repos, _markers, out, _alone, _before = python_build
    excluded = by_repo(read(out / "excluded.jsonl"))
    bomb = [e for e in excluded["memory_bomb"] if e["stage"] == "analyzer"]
    # the verdict, and the builder's note that the repository gave nothing
    assert sorted(e["reason"] for e in bomb) == ["no_crossfile_refs", "toolchain_memory_limit"]
    bomb = [e for e in bomb if e["reason"] == "toolchain_memory_limit"]
    assert "toolchain memory limit" in bomb[0]["detail"] and "1024 MiB" in bomb[0]["detail"]
    assert "memory_bomb" not in by_repo(read(out / "line_completion.jsonl"))


def test_the_normal_repository_keeps_all_its_examples(python_build):
    _root, _repos, _markers, out, alone, _before = python_build
    together = by_repo(read(out / "line_completion.jsonl"))["control"]
    by_itself = read(alone / "line_completion.jsonl")
    assert by_itself and together == by_itself


# Shadows that fire when pylint runs in the tree without the import guard.  A module pylint or astroid imports
# before reading the tree is taken from sys.modules and never looked up again, so its shadow cannot fire: astroid
# 4's numpy brain imports importlib.metadata, which imports `email`, so `email` is no control from pylint 4.1.5 /
# astroid 4.4.0 (toolchains.lock) on; `smtplib` stands where it stood.
SHADOW_CONTROLS = {"xmlrpc", "curses", "multiprocessing", "smtplib"}


def _imported_by_pylint_itself() -> set[str]:
    """Top-level modules already imported once pylint (and with it astroid and its brains) is loaded."""
    res = subprocess.run([sys.executable, "-I", "-c", "import sys, pylint.lint\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, timeout=scaled(120), cwd="/")
    assert res.returncode == 0, res.stderr[-2000:]
    return {name.split(".")[0] for name in res.stdout.split()}


def test_each_shadowing_module_could_fire(tmp_path):
    # Without the import guard (plain `python -m pylint` in the tree, as before), the same repository runs its code:
    # the case tests something.  Its own copy and markers: the build's fixture is left as it was, in any order.
    markers = tmp_path / "markers"
    shadows = make_stdlib_shadows(tmp_path / "repos", markers)
    res = subprocess.run([sys.executable, "-I", "-B", "-m", "pylint", "--rcfile=/dev/null", "--disable=all",
                          "--enable=E1101", "--recursive=y", "."], cwd=shadows.source, capture_output=True, text=True,
                         timeout=scaled(300))
    fired = {p.name for p in markers.iterdir()}
    missing = SHADOW_CONTROLS - fired
    assert not missing and len(fired) > 100, (
        f"controls that did not fire: {sorted(missing)} (already imported by pylint itself: "
        f"{sorted(missing & _imported_by_pylint_itself())}); {len(fired)} fired; pylint said: {res.stderr[-1500:]}")


def test_the_shadow_controls_are_modules_pylint_does_not_import_itself():
    """The premise of the controls above, checked on the pinned pylint: none is loaded before the tree is read."""
    assert not SHADOW_CONTROLS & _imported_by_pylint_itself()


# ---------------------------------------------------------------------------------------------------------------
# a compromised toolchain (stand-in tsc)


class Listener:
    """A host unix socket and a TCP port on 127.0.0.1 that record every connection."""

    def __init__(self, path: Path) -> None:
        self.connections: list[str] = []
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(str(path))
        self.unix.listen(16)
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.port = self.tcp.getsockname()[1]
        for s in (self.unix, self.tcp):
            threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, s: socket.socket) -> None:
        while True:
            try:
                conn, _ = s.accept()
            except OSError:
                return
            self.connections.append(repr(s))
            conn.close()

    def close(self) -> None:
        self.unix.close()
        self.tcp.close()


@pytest.fixture(scope="module")
def ts_build(tmp_path_factory):
    real = Path(os.path.realpath(TypeScriptAnalyzer().tsc_path()))
    if not real.is_file() or shutil.which("node") is None:
        pytest.fail("the pinned TypeScript and node are required: run `bash scripts/setup_toolchains.sh .toolchains`")
    root = tmp_path_factory.mktemp("hostile-toolchains-ts")
    fake = hostile_tsc_package(real.parent.parent, root / "typescript")
    listener = Listener(root / "host.sock")
    tag = f"benchsmith-hostile-{os.getpid()}"
    secrets = {root / "outside-secret": f"{tag}-outside"}
    home = Path("/root") if os.geteuid() == 0 else Path.home()
    secrets[home / f".{tag}-secret"] = f"{tag}-home-secret"
    if Path("/home").is_dir():
        secrets[Path("/home") / f".{tag}-secret"] = f"{tag}-slash-home-secret"
    for p, text in secrets.items():
        p.write_text(text)
    writes = [root / "written-by-toolchain", Path("/tmp") / f"{tag}-written", home / f".{tag}-written",
              Path("/var/tmp") / f"{tag}-written"]
    repos = root / "repos"
    args_for = {"socket": str(root / "host.sock"), "network": str(listener.port),
                "read": ",".join(str(p) for p in [*secrets, "/etc/shadow"]), "write": ",".join(map(str, writes))}
    cases = [make_attack_repo(repos, kind, args_for.get(kind, "")) for kind in TOOLCHAIN_ATTACKS]
    shutil.copytree(CONTROL_TS, repos / "control")
    shutil.rmtree(repos / "control" / "evil-plugin", ignore_errors=True)
    before = tree_digest(repos)
    out = root / "out"
    args = ["--lang", "typescript", "--output", str(out), "--workers", "2", "--toolchain-memory-mb", "512"]
    for c in cases:
        args += ["--repo", c.source]
    args += ["--repo", str(repos / "control")]
    try:
        cli(*args, env={"BENCHSMITH_TSC": str(fake)})
        alone = root / "control-alone"
        cli("--lang", "typescript", "--output", str(alone), "--repo", str(repos / "control"))
    finally:
        listener.close()
        leftovers = toolchain_processes()
    yield {"out": out / "typescript", "alone": alone / "typescript", "cases": cases, "listener": listener,
           "secrets": secrets, "writes": writes, "repos": repos, "before": before, "leftovers": leftovers}
    for p in [*secrets, *writes]:
        if p.exists() and p.is_file():
            p.unlink()


EXPECTED = {
    "socket": "hostile tsc socket: refused ENOENT",  # the host's socket file does not exist in the view
    "network": "hostile tsc network: refused ENETUNREACH",  # no interface is up
    "internet": "hostile tsc internet: refused ENETUNREACH",
}


def test_each_attack_ends_in_its_exact_verdict(ts_build):
    excluded = by_repo(read(ts_build["out"] / "excluded.jsonl"))
    for case in ts_build["cases"]:
        kind = case.name.removeprefix("attack_")
        mine = [e for e in excluded.get(case.name, []) if e["stage"] == "analyzer" and e["item_id"] == case.name]
        assert mine, f"{case.name}: nothing recorded"
        assert {e["reason"] for e in mine} == {str(r) for r in case.reasons} | {"no_crossfile_refs"}, (case.name, mine)
        detail = [e for e in mine if e["reason"] != "no_crossfile_refs"][0]["detail"]
        if kind in EXPECTED:
            assert EXPECTED[kind] in detail, detail
        elif kind == "read":
            for p in ts_build["secrets"]:
                assert f"{p}:ENOENT" in detail, detail
            assert "/etc/shadow:ENOENT" in detail
        elif kind == "write":
            # /tmp inside is the run's private tmpfs (the host file is checked in test_nothing_escaped); every other
            # place is either absent from the view or not writable
            for p in ts_build["writes"]:
                assert (f"{p}=WRITTEN" if p.parent == Path("/tmp") else f"{p}:") in detail, detail
        elif kind == "fork":
            spawned = int(detail.split("hostile tsc fork: spawned ")[1].split()[0])
            assert 10 < spawned < confine.Limits().processes, detail  # it could fork, up to the cap
        elif kind == "memory":
            assert "toolchain memory limit" in detail and "512 MiB" in detail


def test_nothing_escaped(ts_build):
    assert ts_build["listener"].connections == []
    for p in ts_build["writes"]:
        assert not p.exists(), p
    text = all_output_text(ts_build["out"].parent)
    for secret in ts_build["secrets"].values():
        assert secret not in text
    assert tree_digest(ts_build["repos"]) == ts_build["before"]
    assert ts_build["leftovers"] == [] and toolchain_processes() == []


def test_the_normal_typescript_repository_keeps_all_its_examples(ts_build):
    together = by_repo(read(ts_build["out"] / "line_completion.jsonl")).get("control", [])
    by_itself = read(ts_build["alone"] / "line_completion.jsonl")
    assert by_itself and together == by_itself


# ---------------------------------------------------------------------------------------------------------------
# javac: a repository's annotation processor


def test_a_repository_annotation_processor_never_runs(tmp_path):
    if shutil.which("javac") is None:
        pytest.fail("javac is required for Java analysis; run `make setup`")
    marker = tmp_path / "PROCESSOR_RAN"
    case = make_annotation_processor(tmp_path / "repos", marker)
    out = tmp_path / "out"
    cli("--lang", "java", "--output", str(out), "--repo", case.source)
    assert not marker.exists()
    examples = read(out / "java" / "line_completion.jsonl")
    assert {e["metadata"]["file"] for e in examples} == {"src/evil/Use.java"}
    excluded = read(out / "java" / "excluded.jsonl")
    assert not [e for e in excluded if e["reason"] in ("toolchain_crash", "toolchain_missing", "internal_error")]
    assert not toolchain_processes()
