"""Hostile programs must be contained by the local sandbox, each with the expected verdict.

What is checked against what the isolation can assure here (see ``Sandbox.isolation``):
* as root, each run has a throwaway uid, so the program cannot read/delete our 0700 files or signal pytest;
  as non-root these guarantees do not exist and those tests skip, saying why;
* without a network namespace (kernel refuses) the network tests skip, saying why.
"""

from __future__ import annotations

import os
import socket
import textwrap
import threading
import time
from pathlib import Path

import pytest

from benchsmith.evaluate.sandbox import Sandbox, Verdict


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(timeout=2.0, memory_mb=256, max_processes=32, output_cap=16 * 1024, workers=4)


def _needs_uid(sandbox: Sandbox) -> None:
    if not sandbox.isolation.separate_uid:
        pytest.skip("sandbox runs as our own uid (not root): it cannot protect our files/processes; "
                    "use --backend container for that")


def _needs_netns(sandbox: Sandbox) -> None:
    if not sandbox.isolation.network_namespace:
        pytest.skip("the kernel refused a network namespace here: " + sandbox.isolation.describe())


def _named(token: str) -> list[str]:
    """Host pids of processes whose name (comm) is ``token`` -- set by the hostile program, so concurrent
    sandboxes of other test sessions do not count."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == token:
                        out.append(pid)
            except OSError:
                continue
    return out


_NAME_ME = "import ctypes\nctypes.CDLL(None).prctl(15, {token!r}.encode(), 0, 0, 0)\n"  # PR_SET_NAME


def _token() -> str:
    return "bs" + os.urandom(5).hex()


def test_fork_bomb_is_contained_and_leaves_nothing(sandbox):
    token = _token()
    prog = _NAME_ME.format(token=token) + textwrap.dedent("""
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """)
    start = time.monotonic()
    res = sandbox.run(prog, timeout=2)
    assert time.monotonic() - start < 8
    assert res.verdict in (Verdict.TIMEOUT, Verdict.FAILED)
    assert not res.passed
    time.sleep(0.2)
    assert _named(token) == []


def test_infinite_loop_times_out(sandbox):
    start = time.monotonic()
    res = sandbox.run("while True:\n    pass\n", timeout=1)
    assert res.verdict is Verdict.TIMEOUT
    assert res.returncode is None
    assert time.monotonic() - start < 4


def test_sleep_forever_times_out(sandbox):
    start = time.monotonic()
    res = sandbox.run("import time\ntime.sleep(10**6)\n", timeout=1)
    assert res.verdict is Verdict.TIMEOUT
    assert time.monotonic() - start < 4


def test_unbounded_output_is_capped_and_killed(sandbox):
    start = time.monotonic()
    res = sandbox.run("while True:\n    print('x' * 4096)\n", timeout=3)
    assert res.verdict is Verdict.OUTPUT_LIMIT
    assert len(res.stdout) <= 16 * 1024
    assert time.monotonic() - start < 2.5  # killed at the cap, not at the timeout


def test_unbounded_stderr_is_capped(sandbox):
    res = sandbox.run("import sys\nwhile True:\n    sys.stderr.write('y' * 4096)\n", timeout=3)
    assert res.verdict is Verdict.OUTPUT_LIMIT
    assert len(res.stderr) <= 16 * 1024


def test_memory_hog_hits_the_memory_limit(sandbox):
    res = sandbox.run("chunks = []\nwhile True:\n    chunks.append(bytearray(50 * 2**20))\n", timeout=3)
    assert res.verdict is Verdict.MEMORY
    assert "MemoryError" in res.stderr


def test_huge_file_hits_the_file_size_limit(sandbox):
    res = sandbox.run("with open('big.bin', 'wb') as f:\n    f.write(b'x' * (64 * 2**20))\n", timeout=3)
    assert res.verdict is Verdict.OUTPUT_LIMIT


def test_deleting_files_outside_its_directory_fails(sandbox, tmp_path):
    _needs_uid(sandbox)
    canary = tmp_path / "canary.txt"
    canary.write_text("still here")
    prog = textwrap.dedent(f"""
        import os, shutil
        errors = 0
        for attempt in (lambda: os.remove({str(canary)!r}), lambda: shutil.rmtree({str(tmp_path)!r})):
            try:
                attempt()
            except OSError:
                errors += 1
        raise SystemExit(1 if errors else 0)
    """)
    res = sandbox.run(prog)
    assert res.verdict is Verdict.FAILED
    assert canary.read_text() == "still here"


def test_own_directory_is_writable_and_nothing_carries_over(sandbox):
    write = textwrap.dedent("""
        import os, tempfile
        with open('scratch.txt', 'w') as f:
            f.write('ok')
        assert os.path.expanduser('~') == os.getcwd() == tempfile.gettempdir()
        print(os.getcwd())
    """)
    first = sandbox.run(write)
    assert first.verdict is Verdict.PASSED, first.stderr
    workdir = first.stdout.strip()
    check = f"import os\nprint(os.getcwd())\nassert not os.path.exists({workdir!r}), 'left over'\n"
    second = sandbox.run(check)
    assert second.verdict is Verdict.PASSED, second.stderr
    assert second.stdout.strip() != workdir


def test_file_systems_outside_the_scratch_space_are_read_only(sandbox, tmp_path):
    from benchsmith.evaluate.sandbox import LaunchMode

    if sandbox.isolation.mode is not LaunchMode.ROOT_FORKSERVER:
        pytest.skip(f"read-only file systems need the fork server (root); mode here: {sandbox.isolation.mode}")
    import shutil
    import tempfile

    # a world-writable directory on a disk file system (the sandbox's /tmp is its own tmpfs)
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else str(tmp_path)
    target = Path(tempfile.mkdtemp(prefix="bs-sbx-rw-test-", dir=base))
    target.chmod(0o777)
    prog = textwrap.dedent(f"""
        import errno
        for path in ({str(target / 'x')!r}, '/var/tmp/benchsmith-sandbox-test', '/etc/benchsmith-test'):
            try:
                open(path, 'w').write('x')
            except OSError as exc:
                assert exc.errno in (errno.EROFS, errno.EACCES), exc
            else:
                raise SystemExit('wrote ' + path)
        try:
            open({str(target / 'x')!r}, 'w')
        except OSError as exc:
            assert exc.errno == errno.EROFS, exc  # writable by mode bits, read-only by mount
    """)
    try:
        res = sandbox.run(prog)
        assert res.verdict is Verdict.PASSED, res.stderr
        assert list(target.iterdir()) == []
    finally:
        shutil.rmtree(target, ignore_errors=True)


def test_reading_the_users_home_fails(sandbox, tmp_path, monkeypatch):
    _needs_uid(sandbox)
    fake_home = tmp_path / "home"
    fake_home.mkdir()
    secret = "TOPSECRET-" + os.urandom(8).hex()
    (fake_home / ".secret").write_text(secret)
    monkeypatch.setenv("HOME", str(fake_home))  # the sandbox must not hand our HOME to the program
    prog = textwrap.dedent(f"""
        import os
        found = []
        for path in (os.path.expanduser('~/.secret'), {str(fake_home / '.secret')!r}, '/root/.bashrc'):
            try:
                with open(path) as f:
                    found.append(f.read())
            except OSError as exc:
                print('denied', path, type(exc).__name__)
        print(''.join(found))
        raise SystemExit(0 if found else 3)
    """)
    res = sandbox.run(prog)
    assert secret not in res.stdout + res.stderr
    assert res.returncode == 3
    assert os.environ["HOME"] not in res.stdout.replace("denied " + str(fake_home / ".secret"), "")


def test_environment_is_minimal(sandbox, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_TEST_TOKEN", "should-not-leak")
    res = sandbox.run("import os, json\nprint(json.dumps(dict(os.environ)))\n")
    assert res.verdict is Verdict.PASSED
    assert "should-not-leak" not in res.stdout


def test_opening_a_network_socket_fails(sandbox):
    _needs_netns(sandbox)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            try:
                accepted.append(server.accept())
            except (socket.timeout, OSError):
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    prog = f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\nprint('connected')\n"
    try:
        res = sandbox.run(prog)
        outside = sandbox.run("import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)\n")
    finally:
        t.join()
        server.close()
    assert res.verdict is Verdict.FAILED and "connected" not in res.stdout
    assert "OSError" in res.stderr or "Error" in res.stderr
    assert outside.verdict is Verdict.FAILED
    assert accepted == []


def test_abstract_unix_socket_of_the_host_is_unreachable(sandbox):
    _needs_netns(sandbox)
    name = b"\0benchsmith-test-" + os.urandom(6).hex().encode()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name)
    server.listen(1)
    try:
        res = sandbox.run(f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({name!r})\n")
    finally:
        server.close()
    assert res.verdict is Verdict.FAILED
    assert "ConnectionRefused" in res.stderr or "FileNotFound" in res.stderr


def test_closing_its_own_stdout_is_handled(sandbox):
    start = time.monotonic()
    res = sandbox.run("import os\nos.close(1)\nos.close(2)\nwhile True:\n    pass\n", timeout=1)
    assert res.verdict is Verdict.TIMEOUT
    assert time.monotonic() - start < 4
    res = sandbox.run("import os\nos.close(0)\nos.close(1)\nos.close(2)\nraise SystemExit(0)\n")
    assert res.verdict is Verdict.PASSED


def test_killing_its_parent_does_not_kill_us(sandbox):
    _needs_uid(sandbox)
    res = sandbox.run("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint('sent')\n")
    assert res.verdict is Verdict.FAILED
    assert "PermissionError" in res.stderr
    # and kill(-1) (every process it may signal) must not reach us either
    res = sandbox.run("import os, signal\nos.kill(-1, signal.SIGKILL)\n")
    assert res.verdict in (Verdict.FAILED, Verdict.PASSED)  # it may only kill itself


def test_daemon_that_escapes_the_process_group_is_killed(sandbox):
    _needs_uid(sandbox)
    token = _token()
    prog = _NAME_ME.format(token=token) + textwrap.dedent("""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(300)
            os._exit(0)
        print('parent done')
    """)
    start = time.monotonic()
    res = sandbox.run(prog, timeout=2)
    assert res.verdict is Verdict.PASSED
    assert time.monotonic() - start < 3  # the daemon holding the pipes did not stall us
    time.sleep(0.2)
    assert _named(token) == []


def test_hostile_batch_keeps_order_and_verdicts(sandbox):
    programs = ["print(1)", "raise SystemExit(2)", "while True: pass", "print(2)"]
    res = sandbox.run_many(programs, timeout=1)
    assert [r.verdict for r in res] == [Verdict.PASSED, Verdict.FAILED, Verdict.TIMEOUT, Verdict.PASSED]
    assert res[0].stdout.strip() == "1" and res[3].stdout.strip() == "2"
