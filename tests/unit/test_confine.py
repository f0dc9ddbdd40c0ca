"""Toolchain confinement (benchsmith.confine): what a confined run can see, reach and use, with real programs run
through ``runner.run(..., confine=...)`` the way every analyzer runs its toolchain."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from benchsmith import confine, runner
from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.confine import MIB, Confinement, Limits
from benchsmith.runner import confinement
from benchsmith.files import snapshot
from tests.hostile import adopting_orphans, toolchain_processes
from tests.timing import scaled

REPO_ROOT = Path(__file__).resolve().parents[2]
CAPS = runner.probe_confinement()
needs_confinement = pytest.mark.skipif(not CAPS.available, reason=f"this machine cannot confine: {CAPS.missing}")


def confined(program: str, *, read=(), scratch=(), write=(), limits: Limits | None = None, timeout: float | None = None,
             cwd: str | None = None) -> runner.RunResult:
    conf = Confinement(read=tuple(confine.python_paths()) + tuple(str(p) for p in read),
                       scratch=tuple(str(p) for p in scratch), write=tuple(str(p) for p in write),
                       limits=limits or Limits(), grant=tuple(str(p) for p in read))
    return runner.run([sys.executable, "-I", "-S", "-B", "-c", textwrap.dedent(program)], confine=conf,
                      timeout=scaled(60) if timeout is None else timeout, cwd=cwd, output_cap=1 << 20)


def facts(res: runner.RunResult) -> dict:
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def surviving() -> list[int]:
    """pids of processes this test process started that still run as a toolchain uid (other builds on the
    machine use the same uid range; see tests/hostile/processes.py)."""
    return toolchain_processes()


@pytest.fixture(scope="module", autouse=True)
def _own_orphans():
    """Whatever escapes a confined run is re-parented to us (not to init), so ``surviving`` sees it."""
    with adopting_orphans():
        yield


def test_probe_says_what_it_found():
    assert CAPS.describe().startswith("toolchains confined" if CAPS.available else "toolchains NOT confined")
    if os.geteuid() == 0 and sys.platform == "linux":
        # CI runs as root on Linux: there, confinement must be available (it is the default)
        assert CAPS.available, CAPS.missing


@needs_confinement
def test_a_confined_run_is_a_throwaway_uid_in_fresh_namespaces():
    res = confined("""
        import json, os, socket
        print(json.dumps({"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "pid": os.getpid(),
                          "procs": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
                          "ifaces": sorted(n for _, n in socket.if_nameindex()), "host": socket.gethostname(),
                          "root": sorted(os.listdir("/")), "caps": open("/proc/self/status").read()}))
    """)
    f = facts(res)
    assert confine.UID_BASE <= f["uid"] < confine.UID_BASE + confine.UID_SPAN and f["gid"] == f["uid"]
    assert f["groups"] == []
    assert f["pid"] <= 3 and len(f["procs"]) <= 3  # its own pid namespace: our processes are not there
    assert f["ifaces"] == ["lo"]
    assert f["host"] == "benchsmith"
    assert "CapEff:\t0000000000000000" in f["caps"] and "NoNewPrivs:\t1" in f["caps"]
    for hidden in ("home", "run", "var", "srv", "mnt", "opt", "sys", "boot"):
        assert hidden not in f["root"], f["root"]


@needs_confinement
def test_host_files_are_not_there_and_the_view_is_read_only(tmp_path):
    secret_dir = Path("/root") if os.geteuid() == 0 else Path.home()
    secret = secret_dir / f".benchsmith-confine-secret-{os.getpid()}"
    secret.write_text("top secret")
    var_tmp = Path("/var/tmp") / f"benchsmith-confine-{os.getpid()}"
    var_tmp.write_text("host var/tmp")
    host_tmp = tmp_path / "host-tmp-file"
    host_tmp.write_text("host tmp")
    try:
        res = confined(f"""
            import json, os
            def readable(p):
                try:
                    open(p).read(); return True
                except OSError:
                    return False
            def writable(p):
                try:
                    open(p, "w").write("x"); return True
                except OSError:
                    return False
            open("/tmp/benchsmith-confine-scratch-{os.getpid()}", "w").write("scratch works")
            print(json.dumps({{"secret": readable({str(secret)!r}), "var_tmp": readable({str(var_tmp)!r}),
                              "host_tmp": readable({str(host_tmp)!r}), "shadow": readable("/etc/shadow"),
                              "tmp": os.listdir("/tmp"), "usr": writable("/usr/bin/benchsmith-x"),
                              "root": writable("/x"), "etc": writable("/etc/passwd"),
                              "outside": writable({str(tmp_path / "written")!r})}}))
        """)
        f = facts(res)
    finally:
        secret.unlink()
        var_tmp.unlink()
    # /tmp is private: only the run's scratch file, and the mount points of what the run was given to read when
    # that lives under the host's /tmp (a checkout and its venv cloned there: the interpreter is bound read-only)
    given = {Path(p).parts[2] for p in confine.python_paths() if len(Path(p).parts) > 2 and Path(p).parts[1] == "tmp"}
    assert sorted(f.pop("tmp")) == sorted({f"benchsmith-confine-scratch-{os.getpid()}"} | given)
    assert f == {"secret": False, "var_tmp": False, "host_tmp": False, "shadow": False,
                 "usr": False, "root": False, "etc": False, "outside": False}
    assert not (tmp_path / "written").exists()
    assert not Path(f"/tmp/benchsmith-confine-scratch-{os.getpid()}").exists()


@needs_confinement
def test_named_data_is_readable_even_under_a_private_directory(tmp_path):
    private = tmp_path / "private"
    tree = private / "tree"
    (tree / "pkg").mkdir(parents=True)
    private.chmod(0o700)
    (tree / "pkg" / "a.py").write_text("A = 1\n")
    (tree / "pkg" / "a.py").chmod(0o600)  # as a restrictive umask would leave it
    res = confined(f"""
        import json, os
        print(json.dumps({{"text": open("pkg/a.py").read(), "cwd": os.getcwd(),
                          "siblings": os.listdir({str(private)!r})}}))
    """, read=(tree,), cwd=str(tree))
    f = facts(res)
    assert f == {"text": "A = 1\n", "cwd": str(tree), "siblings": ["tree"]}
    # only the named tree changed mode; its private parent did not
    assert stat.S_IMODE(private.stat().st_mode) == 0o700


@needs_confinement
def test_write_paths_are_handed_over_and_taken_back(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    res = confined(f"open({str(out / 'result.txt')!r}, 'w').write('done')", write=(out,))
    assert res.returncode == 0, res.stderr
    assert (out / "result.txt").read_text() == "done"
    for p in (out, out / "result.txt"):
        assert p.stat().st_uid == os.geteuid()


@needs_confinement
def test_host_unix_sockets_and_the_network_are_unreachable(tmp_path):
    path = tmp_path / "host.sock"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(1)
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(1)
    port = tcp.getsockname()[1]
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(f"\0benchsmith-confine-{os.getpid()}")
    abstract.listen(1)
    try:
        res = confined(f"""
            import json, socket
            def reach(family, addr):
                s = socket.socket(family, socket.SOCK_STREAM)
                s.settimeout(3)
                try:
                    s.connect(addr); return "connected"
                except OSError as exc:
                    return type(exc).__name__
            print(json.dumps({{"path": reach(socket.AF_UNIX, {str(path)!r}),
                              "abstract": reach(socket.AF_UNIX, "\\0benchsmith-confine-{os.getpid()}"),
                              "tcp": reach(socket.AF_INET, ("127.0.0.1", {port})),
                              "outside": reach(socket.AF_INET, ("1.1.1.1", 53))}}))
        """)
        f = facts(res)
    finally:
        srv.close()
        tcp.close()
        abstract.close()
    assert "connected" not in f.values(), f


@needs_confinement
def test_memory_of_the_whole_process_tree_is_limited():
    # six children of 100 MiB each: each alone is under the limit, together they are not
    res = confined("""
        import os, time
        kids = []
        for _ in range(6):
            pid = os.fork()
            if pid == 0:
                block = bytearray(100 * 1024 * 1024)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(2)
                os._exit(0)
            kids.append(pid)
        ok = sum(os.waitpid(pid, 0)[1] == 0 for pid in kids)
        print("children that finished:", ok)
    """, limits=Limits(memory_bytes=256 * MIB), timeout=scaled(60))
    assert "children that finished: 6" not in res.stdout
    if CAPS.memory in (confine.MemoryControl.CGROUP_V1, confine.MemoryControl.CGROUP_V2):
        assert res.oom and "toolchain memory limit" in res.stderr
    assert not surviving()


@needs_confinement
def test_a_fork_bomb_is_capped_and_nothing_survives():
    res = confined("""
        import os, time
        n = 0
        try:
            for _ in range(10000):
                if os.fork() == 0:
                    os.setsid()  # leaves the process group: only the namespace and cgroup catch it
                    time.sleep(300)
                    os._exit(0)
                n += 1
        except OSError as exc:
            print("capped after", n, type(exc).__name__, flush=True)
    """, limits=Limits(processes=40), timeout=scaled(30))
    assert "capped after" in res.stdout
    assert int(res.stdout.split()[2]) < 40
    assert not surviving()


@needs_confinement
def test_daemons_die_with_the_run():
    res = confined("""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(600)
            os._exit(0)
        print("parent leaves")
    """, timeout=scaled(30))
    assert res.returncode == 0 and "parent leaves" in res.stdout
    assert not surviving()


@needs_confinement
def test_file_size_and_cpu_limits():
    res = confined("""
        try:
            open("/tmp/big", "wb").write(b"x" * (8 * 1024 * 1024))
            print("wrote")
        except OSError as exc:
            print("refused", exc.errno)
    """, limits=Limits(file_size=1 * MIB))
    assert "refused" in res.stdout or res.returncode == 128 + 25  # EFBIG or SIGXFSZ
    res = confined("while True: pass", limits=Limits(cpu_seconds=1), timeout=scaled(30))
    assert res.returncode in (128 + 24, 128 + 9) and not res.timed_out  # SIGXCPU, then SIGKILL at the hard limit


@needs_confinement
def test_concurrent_runs_get_different_uids():
    uids: list[int] = []

    def one() -> None:
        uids.append(facts(confined("import json, os, time; time.sleep(1); print(json.dumps(os.getuid()))")))

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(uids)) == 3


def test_unavailable_confinement_refuses_in_one_line(monkeypatch, tmp_path, capsys):
    # the patched probe result stands for a machine without the namespaces (or root) confinement needs
    monkeypatch.setattr(confinement, "_PROBED", confine.Capabilities(False, None, False, "no pid namespace (test)"))
    with pytest.raises(confine.ConfinementUnavailable) as err:
        runner.require_confinement(False)
    assert "\n" not in str(err.value) and "no pid namespace (test)" in str(err.value)
    assert "--allow-unconfined" in str(err.value)
    assert runner.require_confinement(True).available is False  # allowed: the caller runs unconfined

    from benchsmith.cli import main

    code = main(["build", "cceval", "--lang", "python", "--repo", str(REPO_ROOT / "samples" / "python" / "shoplib"),
                 "--output", str(tmp_path / "out"), "-q", "--no-card", "--retrievers", "none"])
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code != 0 and len(lines) == 1 and "cannot confine toolchains" in lines[0]
    assert not (tmp_path / "out").exists()

    # the analyzer records the repository instead of running its toolchain unconfined
    analyzer = get_analyzer("python")
    snap = snapshot(REPO_ROOT / "samples" / "python" / "shoplib", analyzer.extensions, tmp_path / "tree",
                    repo_name="shoplib")
    (tmp_path / "work").mkdir()
    result = analyzer.analyze(snap, tmp_path / "work")
    assert [e.reason.value for e in result.exclusions] == ["toolchain_missing"] and not result.refs
    assert "cannot confine toolchains" in result.exclusions[0].detail


def test_container_runs_are_confined_too(tmp_path):
    spec = runner.ContainerSpec(engine=runner.ToolchainBackend.DOCKER, image="benchsmith-x:0123456789ab",
                                mounts=(runner.Mount(str(tmp_path), "/src"),), memory="2048m", pids=256)
    argv = runner.container_argv(["tool"], spec, None)
    joined = " ".join(argv)
    for flag in ("--network none", "--ipc none", "--read-only", "--cap-drop ALL", "--memory 2048m",
                 "--pids-limit 256", "--security-opt no-new-privileges"):
        assert flag in joined
    user = argv[argv.index("--user") + 1]
    assert not user.startswith("0:") and user != "0"
    if os.geteuid() == 0:
        assert user == f"{confine.CONTAINER_UID}:{confine.CONTAINER_UID}"
    # the analyzers' container spec carries the configured memory limit
    analyzer = get_analyzer("python", AnalyzerOptions(backend=runner.ToolchainBackend.DOCKER, memory_mb=1536,
                                                      container_image="img:tag"))
    assert analyzer.container([], "/src").memory == "1536m"


@needs_confinement
def test_confined_and_unconfined_analysis_agree(tmp_path):
    outcomes = []
    for on in (True, False):
        analyzer = get_analyzer("python", AnalyzerOptions(confine=on))
        snap = snapshot(REPO_ROOT / "samples" / "python" / "shoplib", analyzer.extensions, tmp_path / f"tree{on}",
                        repo_name="shoplib")
        work = tmp_path / f"work{on}"
        work.mkdir()
        result = analyzer.analyze(snap, work)
        outcomes.append(([r.to_dict() for r in result.refs], [e.to_dict() for e in result.exclusions]))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0], "the sample repository has cross-file references"


def test_the_go_environment_runs_nothing_extra():
    from benchsmith.analyzers.go import go_env

    env = go_env("/h", "/c")
    assert env["GOTOOLCHAIN"] == "local" and env["GOPROXY"] == "off" and env["CGO_ENABLED"] == "0"
    assert env["GOFLAGS"] == "-mod=mod" and env["GOENV"] == "off" and env["GOWORK"] == "off"
