"""Sandbox API: verdicts, order, exit semantics, the exec-based launch path and the container backend."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest

from benchsmith.evaluate import sandbox as sbx
from benchsmith.evaluate.sandbox import launch as sbx_launch
from benchsmith.evaluate.sandbox import probe as sbx_probe
from benchsmith.evaluate.sandbox import verdicts as sbx_verdicts
from benchsmith.evaluate.sandbox import ExecResult, LaunchMode, Sandbox, SandboxBackend, Verdict
from tests.timing import scaled


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    with Sandbox(timeout=scaled(3.0), memory_mb=512, workers=3) as sb:
        yield sb


def test_isolation_is_described(sandbox):
    iso = sandbox.isolation
    text = iso.describe()
    assert iso.interpreter in text and iso.mode.value in text
    assert ("NO network namespace" in text) != iso.network_namespace
    assert ("IPC namespace per run" in text) == iso.ipc_namespace
    assert ("whole process tree" in text) == bool(iso.memory_cgroup)
    assert ("no cgroup" in text) == (not iso.memory_cgroup)  # the fallback is said, not implied
    assert ("minimal read-only root" in text) == iso.private_root


@pytest.mark.parametrize(
    ("program", "verdict", "code"),
    [
        ("print('ok')", Verdict.PASSED, 0),
        ("assert 1 + 1 == 3", Verdict.FAILED, 1),
        ("raise SystemExit(7)", Verdict.FAILED, 7),
        ("raise SystemExit('bye')", Verdict.FAILED, 1),
        ("raise SystemExit()", Verdict.PASSED, 0),
        ("def f(:\n    pass", Verdict.FAILED, 1),
        ("import sys\nsys.exit(0)", Verdict.PASSED, 0),
        ("import os\nos._exit(3)", Verdict.FAILED, 3),
        ("exit(4)", Verdict.FAILED, 4),  # site builtins exist, as in `python program.py`
    ],
)
def test_exit_semantics_match_the_interpreter(sandbox, program, verdict, code):
    res = sandbox.run(program)
    assert isinstance(res, ExecResult)
    assert res.verdict is verdict, res.stderr
    assert res.returncode == code
    assert res.passed is (verdict is Verdict.PASSED)


def test_stderr_carries_the_traceback_and_detail_the_exception(sandbox):
    res = sandbox.run("def check(x):\n    assert x == 2, 'wrong answer'\ncheck(1)\n")
    assert res.verdict is Verdict.FAILED
    assert "Traceback" in res.stderr and "AssertionError: wrong answer" in res.stderr
    assert res.detail == "AssertionError: wrong answer"


def test_syntax_error_reports_the_line(sandbox):
    res = sandbox.run("x = 1\ny = (\n")
    assert res.verdict is Verdict.FAILED
    assert "SyntaxError" in res.stderr and "program.py" in res.stderr


def test_stdout_and_unicode_survive(sandbox):
    res = sandbox.run("print('héllo ✓')\nimport sys\nprint('err', file=sys.stderr)")
    assert res.stdout == "héllo ✓\n"
    assert res.stderr == "err\n"


def test_atexit_and_threads_run_at_exit(sandbox):
    prog = textwrap.dedent("""
        import atexit, threading, time
        atexit.register(lambda: print('atexit ran'))
        def worker():
            time.sleep(0.1)
            print('thread finished')
        threading.Thread(target=worker).start()
    """)
    res = sandbox.run(prog)
    assert res.verdict is Verdict.PASSED
    assert res.stdout.splitlines() == ["thread finished", "atexit ran"]


def test_main_guard_and_hash_seed_are_those_of_a_script(sandbox):
    prog = "import sys\nassert __name__ == '__main__'\nprint(hash('abc'))\nprint(sys.argv)\n"
    first, second = sandbox.run(prog), sandbox.run(prog)
    assert first.verdict is Verdict.PASSED, first.stderr
    assert first.stdout == second.stdout  # PYTHONHASHSEED=0: same verdicts on every run
    assert "['program.py']" in first.stdout


def test_run_many_preserves_order_and_counts(sandbox):
    programs = [f"import sys\nprint({i})\nsys.exit({i % 3})" for i in range(25)]
    results = sandbox.run_many(programs, progress=False)
    assert [r.stdout.strip() for r in results] == [str(i) for i in range(25)]
    assert [r.returncode for r in results] == [i % 3 for i in range(25)]
    assert sandbox.run_many([]) == []


def test_run_many_with_progress_bar(sandbox, capsys):
    results = sandbox.run_many(["print(1)", "print(2)"], progress=True)
    assert [r.verdict for r in results] == [Verdict.PASSED, Verdict.PASSED]


def test_large_program_and_output_near_the_cap(sandbox):
    body = "\n".join(f"v{i} = {i}" for i in range(20000))  # ~200 kB of source
    res = sandbox.run(body + "\nprint(v19999)\nprint('z' * 60000)")
    assert res.verdict is Verdict.PASSED, res.stderr
    assert res.stdout.startswith("19999\n")
    assert len(res.stdout) == 6 + 60001


def test_per_call_timeout_overrides_the_default(sandbox):
    res = sandbox.run("import time\ntime.sleep(1.5)\n", timeout=0.5)
    assert res.verdict is Verdict.TIMEOUT
    assert sandbox.run("import time\ntime.sleep(0.2)\n").verdict is Verdict.PASSED


def test_invalid_settings_are_refused():
    with pytest.raises(ValueError):
        Sandbox(timeout=0)
    with pytest.raises(ValueError):
        Sandbox(backend="chroot")


def test_exec_launch_path_contains_the_same_programs():
    """The path used without the fork server (exec of a fresh interpreter per program)."""
    base = sbx.probe_isolation(None, forkserver=False)
    assert base.mode is not LaunchMode.ROOT_FORKSERVER
    with Sandbox(timeout=2.0, memory_mb=256, forkserver=False, workers=2) as sb:
        assert sb.isolation == base
        results = sb.run_many(["print('ok')", "assert False", "while True: pass",
                               "x = bytearray(2**31)", "import os\nos.kill(os.getppid(), 9)"], timeout=scaled(1))
    verdicts = [r.verdict for r in results]
    assert verdicts[:4] == [Verdict.PASSED, Verdict.FAILED, Verdict.TIMEOUT, Verdict.MEMORY]
    if base.separate_uid or base.pid_namespace:
        assert verdicts[4] is Verdict.FAILED
    if base.network_namespace:
        res = Sandbox(timeout=scaled(2), forkserver=False).run(
            "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=1)")
        assert res.verdict is Verdict.FAILED and "unreachable" in res.stderr


def test_fork_server_is_replaced_when_it_dies(sandbox):
    if sandbox.isolation.mode is not LaunchMode.ROOT_FORKSERVER:
        pytest.skip(f"no fork server in mode {sandbox.isolation.mode}")
    assert sandbox.run("print(1)").passed
    pool = sandbox.backend_impl().pool
    for z in list(pool._idle):
        z.proc.kill()
        z.proc.wait()
    res = sandbox.run("print(2)")
    assert res.verdict is Verdict.PASSED and res.stdout == "2\n"


def test_verdict_mapping_of_raw_results():
    from benchsmith.runner import RunResult

    def v(**kw) -> Verdict:
        base = dict(argv=["x"], returncode=1, stdout="", stderr="", timed_out=False, truncated=False, duration=0.1)
        base.update(kw)
        return sbx_verdicts.verdict_of(RunResult(**base)).verdict

    assert v(returncode=0) is Verdict.PASSED
    assert v(returncode=None, timed_out=True) is Verdict.TIMEOUT
    assert v(returncode=-9, truncated=True) is Verdict.OUTPUT_LIMIT
    assert v(returncode=128 + 24) is Verdict.TIMEOUT  # SIGXCPU via a shell
    assert v(returncode=-25) is Verdict.OUTPUT_LIMIT  # SIGXFSZ
    assert v(returncode=1, stderr="Traceback ...\nMemoryError\n") is Verdict.MEMORY
    assert v(returncode=125, stderr="sandbox setup failed: OSError()") is Verdict.ERROR
    assert v(returncode=2, stderr="boom\n") is Verdict.FAILED


@pytest.mark.container
def test_container_backend_runs_the_same_programs():
    from benchsmith import containers

    engine = containers.detect_engine()
    if engine is None:
        pytest.skip("no container engine (docker/podman) answers here")
    tag = containers.image_tag("sandbox.Dockerfile")
    if not containers.image_exists(engine, tag):
        # building takes minutes on a cold cache; CI builds the images first (scripts/ci_containers.sh)
        pytest.skip(f"sandbox image {tag} is not built here (python -m benchsmith.containers builds it)")
    sb = Sandbox(backend=SandboxBackend.CONTAINER, timeout=5.0, memory_mb=256, engine=engine.value)
    assert sb.isolation.mode is LaunchMode.CONTAINER
    results = sb.run_many(["print('ok')", "assert False", "while True: pass",
                           "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)",
                           "open('/etc/x', 'w')"], timeout=4)
    assert [r.verdict for r in results] == [Verdict.PASSED, Verdict.FAILED, Verdict.TIMEOUT, Verdict.FAILED,
                                            Verdict.FAILED]
    assert results[0].stdout == "ok\n"


def test_isolation_dataclass_is_frozen(sandbox):
    with pytest.raises(dataclasses.FrozenInstanceError):
        sandbox.isolation.network_namespace = False  # type: ignore[misc]


@pytest.mark.parametrize("mode", [LaunchMode.ROOT_NAMESPACES, LaunchMode.ROOT_UID, LaunchMode.USER_NAMESPACES,
                                  LaunchMode.PLAIN])
def test_every_exec_launch_mode_runs_programs(mode):
    """Each fallback path (chosen on machines that lack root or the fork server) really works."""
    import os

    if mode in (LaunchMode.ROOT_NAMESPACES, LaunchMode.ROOT_UID) and os.geteuid() != 0:
        pytest.skip(f"{mode} needs root")
    if mode in (LaunchMode.ROOT_NAMESPACES, LaunchMode.USER_NAMESPACES) and sbx_launch.UNSHARE is None:
        pytest.skip("util-linux unshare is not installed")
    base = sbx.probe_isolation(None, forkserver=False)
    iso = sbx.Isolation(
        interpreter=base.interpreter, mode=mode, network_namespace=mode is not LaunchMode.PLAIN,
        pid_namespace=mode in (LaunchMode.ROOT_NAMESPACES, LaunchMode.USER_NAMESPACES),
        separate_uid=mode in (LaunchMode.ROOT_NAMESPACES, LaunchMode.ROOT_UID))
    probe = sbx_probe._probe_once(iso)
    if isinstance(probe, str) or probe.returncode != 0:
        pytest.skip(f"{mode} is not available on this kernel: {probe if isinstance(probe, str) else probe.stderr}")
    with Sandbox(timeout=2.0, memory_mb=256, forkserver=False) as sb:
        sb._isolation = iso
        results = sb.run_many(["import os\nprint(os.getcwd() == os.environ['HOME'])", "assert False",
                               "while True: pass", "print('x' * 10**6)"], timeout=scaled(1))
        net = sb.run("import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=1)")
    assert [r.verdict for r in results] == [Verdict.PASSED, Verdict.FAILED, Verdict.TIMEOUT, Verdict.OUTPUT_LIMIT]
    assert results[0].stdout == "True\n"
    assert net.verdict is Verdict.FAILED
    if iso.network_namespace:
        assert "unreachable" in net.stderr


def test_missing_network_namespace_is_detected_and_said(monkeypatch):
    """Where the kernel grants no namespace, the probe says so (warning + notes) instead of pretending."""
    monkeypatch.setattr(sbx_probe, "_PROBED", {})
    monkeypatch.setattr(sbx_probe, "_modes_to_try", lambda forkserver=True: [(LaunchMode.PLAIN, False)])
    with pytest.warns(RuntimeWarning, match="NOT cut off from the network"):
        iso = sbx.probe_isolation(None, forkserver=False)
    assert iso.mode is LaunchMode.PLAIN and not iso.network_namespace and not iso.separate_uid
    assert "NO network namespace" in iso.describe()
    assert any("can use the network" in note for note in iso.notes)


def test_an_interpreter_under_tmp_keeps_its_packages(tmp_path_factory):
    """A checkout cloned under /tmp has its venv there: the sandbox's private /tmp must not cover it (the venv is
    bound on top, read-only, and survives the scratch clearing between runs)."""
    import subprocess
    import sys

    venv = tmp_path_factory.mktemp("venv-under-tmp") / "v"
    assert str(venv).startswith("/tmp/")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=scaled(120))
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "marker_pkg_xyz.py").write_text("VALUE = 41\n")
    sb = Sandbox(python=str(venv / "bin" / "python"), timeout=scaled(20))
    try:
        for _ in range(2):  # the second run: after the scratch was cleared
            res = sb.run("import marker_pkg_xyz\nprint(marker_pkg_xyz.VALUE + 1)\n"
                         "open(marker_pkg_xyz.__file__ + '.evil', 'w')\n")
            assert res.stdout.strip() == "42", res
            assert res.verdict is Verdict.FAILED and ("Read-only" in res.stderr or "Permission" in res.stderr), res
        assert not (site / "marker_pkg_xyz.py.evil").exists()
    finally:
        sb.close()
