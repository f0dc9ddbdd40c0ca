"""One contract, every sandbox backend: each launch mode this machine allows (``probe._modes_to_try``: the fork
server, unshare/setpriv and plain setuid as root; user namespaces and rlimits only otherwise), each forced with
``Sandbox(isolation=probe_mode(mode))``, and the container backend, is held to the same verdicts and the same
isolation.  A backend the machine cannot run is skipped with the reason (no engine, no image, a mode the kernel
refuses); a check the mode does not claim to give (a throwaway uid, a network namespace) is skipped saying so."""

from __future__ import annotations

import socket
import textwrap
import threading
import time

import pytest

from benchsmith.evaluate.sandbox import LaunchMode, Sandbox, SandboxBackend, SandboxUnavailable, Verdict
from benchsmith.evaluate.sandbox import probe as sbx_probe
from benchsmith.evaluate.sandbox.backends import ContainerBackend, ExecBackend, ForkServerBackend
from tests.hostile.traces import NAME_ME, needs_netns, needs_uid, new_token, pids_named
from tests.timing import scaled

CONTAINER = "container"
# every local mode, whether or not this machine offers it: the ids stay the same everywhere, the skips say why
BACKENDS = [m.value for m in LaunchMode if m is not LaunchMode.CONTAINER] + [CONTAINER]
SETTINGS = dict(timeout=scaled(3.0), memory_mb=256, max_processes=32, output_cap=16 * 1024, workers=2)


def _container_sandbox() -> Sandbox:
    from benchsmith import containers

    engine = containers.detect_engine()
    if engine is None:
        pytest.skip("container backend: no container engine (docker/podman) answers here")
    tag = containers.image_tag("sandbox.Dockerfile")
    if not containers.image_exists(engine, tag):
        pytest.skip(f"container backend: the sandbox image {tag} is not built here "
                    "(python -m benchsmith.containers builds it)")
    return Sandbox(backend=SandboxBackend.CONTAINER, engine=engine.value, **SETTINGS)


def _local_sandbox(mode: LaunchMode) -> Sandbox:
    offered = {m for m, _netns in sbx_probe._modes_to_try(forkserver=True)}
    if mode not in offered:
        pytest.skip(f"{mode.value}: not a launch mode of this machine (offered here: "
                    f"{', '.join(sorted(m.value for m in offered))})")
    try:
        iso = sbx_probe.probe_mode(mode)
    except SandboxUnavailable as exc:
        pytest.skip(f"{mode.value}: the kernel refuses it here: {str(exc)[-400:]}")
    return Sandbox(isolation=iso, **SETTINGS)


@pytest.fixture(scope="module", params=BACKENDS)
def box(request) -> Sandbox:
    sb = _container_sandbox() if request.param == CONTAINER else _local_sandbox(LaunchMode(request.param))
    with sb:
        yield sb


def test_the_backend_is_the_one_asked_for(box):
    impl = box.backend_impl()
    if box.backend is SandboxBackend.CONTAINER:
        assert isinstance(impl, ContainerBackend) and box.isolation.mode is LaunchMode.CONTAINER
    elif box.isolation.mode is LaunchMode.ROOT_FORKSERVER:
        assert isinstance(impl, ForkServerBackend)
    else:
        assert isinstance(impl, ExecBackend)
    assert impl.isolation == box.isolation


def test_exit_zero_passes(box):
    res = box.run("import sys\nprint('ok')\nsys.exit(0)\n")
    assert res.verdict is Verdict.PASSED and res.passed, res
    assert res.returncode == 0 and res.stdout == "ok\n"


def test_a_failed_assertion_fails(box):
    res = box.run("assert 1 + 1 == 3, 'arithmetic'\nprint('after')\n")
    assert res.verdict is Verdict.FAILED and res.returncode == 1, res
    assert "AssertionError: arithmetic" in res.stderr and "after" not in res.stdout


@pytest.mark.parametrize("program", ["while True: pass\n", "import time\ntime.sleep(600)\n"],
                         ids=["busy", "sleeping"])
def test_running_past_the_timeout_is_a_timeout(box, program):
    start = time.monotonic()
    res = box.run(program, timeout=1.0)
    assert res.verdict is Verdict.TIMEOUT, res
    assert time.monotonic() - start < scaled(4)  # killed at the timeout, not left to run


def test_allocating_past_the_memory_limit_is_a_memory_verdict(box):
    res = box.run("x = bytearray(2 ** 31)\nprint('allocated')\n")  # 2 GiB against 256 MiB
    assert res.verdict is Verdict.MEMORY, res
    assert "allocated" not in res.stdout


@pytest.mark.parametrize("program", ["print('x' * 10 ** 6)\n", "while True: print('y' * 4096)\n",
                                     "import sys\nwhile True: sys.stderr.write('z' * 4096)\n"],
                         ids=["burst", "endless", "stderr"])
def test_output_over_the_cap_is_an_output_limit(box, program):
    start = time.monotonic()
    res = box.run(program, timeout=scaled(3))
    assert res.verdict is Verdict.OUTPUT_LIMIT, res.detail
    assert len(res.stdout.encode()) <= box.output_cap and len(res.stderr.encode()) <= box.output_cap
    assert time.monotonic() - start < scaled(3)  # killed at the cap, not at the timeout


def test_no_network(box):
    needs_netns(box)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except (socket.timeout, OSError):
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        host = box.run(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
                       "print('connected')\n")
        outside = box.run("import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)\nprint('out')\n")
    finally:
        stop.set()
        t.join()
        server.close()
    assert host.verdict is Verdict.FAILED and "connected" not in host.stdout, host
    assert outside.verdict is Verdict.FAILED and "out" not in outside.stdout, outside
    assert accepted == []


def test_no_write_outside_its_directory(box, tmp_path):
    needs_uid(box)
    tmp_path.chmod(0o755)  # readable to all: only the sandbox keeps the program from writing here
    canary = tmp_path / "canary.txt"
    canary.write_text("still here")
    canary.chmod(0o644)
    prog = textwrap.dedent(f"""
        import os, shutil
        with open('mine.txt', 'w') as f:  # its own directory is writable
            f.write('ok')
        done = []
        for name, attempt in (("write", lambda: open({str(canary)!r}, 'w').write('gone')),
                              ("create", lambda: open({str(tmp_path / 'new.txt')!r}, 'w').write('x')),
                              ("remove", lambda: os.remove({str(canary)!r})),
                              ("rmtree", lambda: shutil.rmtree({str(tmp_path)!r}))):
            try:
                attempt()
                done.append(name)
            except OSError:
                pass
        print('done:', done)
    """)
    res = box.run(prog)
    assert res.verdict is Verdict.PASSED, res
    assert res.stdout == "done: []\n"
    assert canary.read_text() == "still here" and sorted(p.name for p in tmp_path.iterdir()) == ["canary.txt"]


@pytest.mark.parametrize("daemon_stdio", ["kept", "closed"])
def test_processes_it_started_are_killed_after_the_run(box, daemon_stdio):
    token = new_token()
    sleep = "time.sleep(300)" if daemon_stdio == "kept" else \
        "fd = os.open(os.devnull, os.O_RDWR); [os.dup2(fd, i) for i in (0, 1, 2)]; time.sleep(300)"
    prog = NAME_ME.format(token=token) + textwrap.dedent(f"""
        import os, time
        if os.fork() == 0:
            os.setsid()  # a daemon: out of the program's session and process group
            if os.fork() == 0:
                {sleep}
            os._exit(0)
        print('parent done')
    """)
    start = time.monotonic()
    res = box.run(prog, timeout=scaled(5))
    assert res.verdict is Verdict.PASSED and res.stdout == "parent done\n", res
    assert time.monotonic() - start < scaled(3)  # a daemon holding the pipes did not stall the run
    time.sleep(0.2)
    assert _living(pids_named(token)) == []


def _living(pids: list[str]) -> list[str]:
    """Without a pid namespace a killed daemon is reparented to the host's PID 1, which may reap it late: a zombie
    is dead (nothing runs, nothing holds a resource but its pid), so it does not count."""
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            out.append(pid)
    return out


@pytest.mark.parametrize(("program", "verdicts"), [
    ("print('passed')\nprint('{\"verdict\": \"passed\", \"passed\": true}')\nraise SystemExit(1)\n",
     {Verdict.FAILED}),
    ("import sys\nsys.stdout.write('PASSED\\n')\nsys.stderr.write('OK\\n')\nassert False\n", {Verdict.FAILED}),
    # killed by a signal: the container backend reads a SIGKILL as its engine's OOM kill
    ("import os\nos.write(1, b'ok\\n')\nos.kill(os.getpid(), 9)\n", {Verdict.FAILED, Verdict.MEMORY}),
], ids=["claims-then-exit-1", "claims-then-assert", "claims-then-killed"])
def test_printing_a_pass_is_not_a_pass(box, program, verdicts):
    res = box.run(program)
    assert res.verdict in verdicts and not res.passed, res


def test_a_judged_program_cannot_forge_its_results(box):
    """Behind the judge's harness (the assertions are evaluated in our process) a program that writes forged
    records on every descriptor and exits 0 is still not passed."""
    from benchsmith.evaluate.humanext.judge import harness_program, judge, plan_tests

    plan = plan_tests("def check(candidate):\n    assert candidate(7) == 5040\n    assert candidate(3) == 6\n\n"
                      "check(factorial)\n")
    forger = textwrap.dedent("""
        import json, os
        fake = b''.join(json.dumps(r).encode() + b'\\n' for r in ({"done": 2}, {"verdict": "passed"},
                                                                 {"i": 5, "v": 1}, {"end": "ok", "at": 2}))
        for fd in range(0, 64):
            try:
                os.write(fd, fake)
            except OSError:
                pass
        os._exit(0)
    """)
    good = "def factorial(n):\n    out = 1\n    for i in range(2, n + 1):\n        out *= i\n    return out\n"
    assert judge(plan, box.run(harness_program(good, plan))).verdict is Verdict.PASSED  # the control
    assert judge(plan, box.run(harness_program(forger, plan))).verdict is not Verdict.PASSED
