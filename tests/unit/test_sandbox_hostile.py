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

    # a world-writable directory on a disk file system: not even visible inside (the sandbox's /var/tmp is its
    # own tmpfs); the system directories it does see are read-only
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else str(tmp_path)
    target = Path(tempfile.mkdtemp(prefix="bs-sbx-rw-test-", dir=base))
    target.chmod(0o777)
    prog = textwrap.dedent(f"""
        import errno, os
        assert not os.path.exists({str(target)!r})
        for path in ('/etc/benchsmith-test', '/usr/benchsmith-test', '/benchsmith-test', '/run/x'):
            try:
                open(path, 'w').write('x')
            except OSError as exc:
                assert exc.errno in (errno.EROFS, errno.EACCES), exc
            else:
                raise SystemExit('wrote ' + path)
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


# ==============================================================================================================
# issue 13: a sandbox that leaks nothing, verdicts decided outside the program.
# Each case asserts the exact verdict, that the program's "I got through" token never reaches us, that nothing
# named by it was written to the host's shared directories, and that no process or System V IPC object of it
# survives the run.

_SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run")

_LIBC_IPC = textwrap.dedent("""
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    libc.shmat.restype = ctypes.c_void_p
    libc.msgget.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.semget.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    IPC_CREAT = 0o1000
    def err(what):
        e = ctypes.get_errno()
        raise OSError(e, what + ': ' + os.strerror(e))
""")


def _ipc_keys() -> set[int]:
    """Keys of every System V IPC object of the host (shm, msg, sem)."""
    keys: set[int] = set()
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                next(f, None)
                keys |= {int(line.split()[0]) for line in f if line.strip()}
        except OSError:
            continue
    return keys


def _key(token: str) -> int:
    return int(token[2:9], 16) | 0x10000000


def _written(token: str) -> list[str]:
    out = []
    for d in _SHARED_DIRS:
        try:
            out += [f"{d}/{n}" for n in os.listdir(d) if token in n]
        except OSError:
            continue
    return out


def _assert_nothing_left(token: str, stdout: str = "", stderr: str = "") -> None:
    time.sleep(0.1)
    assert f"{token}-reached" not in stdout + stderr
    assert _named(token) == []
    assert _key(token) not in _ipc_keys()
    assert _written(token) == []


def _try_writes(token: str) -> str:
    """Program text: try to leave files named by the token in every shared directory (errors ignored)."""
    return textwrap.dedent(f"""
        for d in {_SHARED_DIRS!r}:
            try:
                open(d + '/{token}-file', 'w').write('x')
            except OSError:
                pass
    """)


@pytest.fixture(scope="module")
def strict() -> Sandbox:
    with Sandbox(timeout=5.0, memory_mb=256, max_processes=32, output_cap=64 * 1024, workers=2) as sb:
        yield sb


def _needs(sandbox: Sandbox, what: str) -> None:
    iso = sandbox.isolation
    if what == "ipc" and not iso.ipc_namespace:
        pytest.skip("no IPC namespace here: " + iso.describe())
    if what == "root" and not iso.private_root:
        pytest.skip("no private root (needs root and the fork server): " + iso.describe())
    if what == "cgroup" and not iso.memory_cgroup:
        pytest.skip("no memory cgroup here (whole-tree memory limit): " + iso.describe())


def test_sysv_shared_memory_dies_with_the_run_and_is_not_shared_between_runs(strict):
    _needs(strict, "ipc")
    token = _token()
    key = _key(token)
    create = _NAME_ME.format(token=token) + _LIBC_IPC + _try_writes(token) + textwrap.dedent(f"""
        sid = libc.shmget({key}, 1 << 20, IPC_CREAT | 0o666)
        if sid < 0: err('shmget')
        if libc.msgget({key}, IPC_CREAT | 0o666) < 0: err('msgget')
        if libc.semget({key}, 1, IPC_CREAT | 0o666) < 0: err('semget')
        print('created', sid)
    """)
    first = strict.run(create)
    assert first.verdict is Verdict.PASSED, first.stderr
    assert key not in _ipc_keys()  # not the host's IPC
    look = _LIBC_IPC + textwrap.dedent(f"""
        found = [libc.shmget({key}, 0, 0) >= 0, libc.msgget({key}, 0) >= 0, libc.semget({key}, 0, 0) >= 0]
        print('{token}-reached' if any(found) else 'gone')
        raise SystemExit(3 if any(found) else 0)
    """)
    second = strict.run(look)
    assert second.verdict is Verdict.PASSED, second.stderr
    assert second.stdout.strip() == "gone"
    _assert_nothing_left(token, first.stdout + second.stdout)


def test_host_sysv_objects_are_invisible(strict):
    _needs(strict, "ipc")
    import ctypes

    token = _token()
    key = _key(token)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    sid = libc.shmget(key, 4096, 0o1000 | 0o666)
    assert sid >= 0
    try:
        res = strict.run(_LIBC_IPC + textwrap.dedent(f"""
            if libc.shmget({key}, 0, 0) >= 0:
                print('{token}-reached')
            raise SystemExit(0 if libc.shmget({key}, 0, 0) < 0 else 4)
        """))
    finally:
        libc.shmctl(sid, 0, None)  # IPC_RMID
    assert res.verdict is Verdict.PASSED, res.stderr
    _assert_nothing_left(token, res.stdout)


def test_sysv_shared_memory_cannot_be_pinned_beyond_the_memory_limit(strict):
    _needs(strict, "ipc")
    token = _token()
    prog = _NAME_ME.format(token=token) + _LIBC_IPC + textwrap.dedent(f"""
        total = 0
        for i in range(8):  # 8 x 100 MB with --memory-mb 256
            sid = libc.shmget({_key(token)} + i, 100 << 20, IPC_CREAT | 0o600)
            if sid < 0: err('shmget')
            addr = libc.shmat(sid, None, 0)
            if addr in (None, ctypes.c_void_p(-1).value): err('shmat')
            ctypes.memset(addr, 1, 100 << 20)
            total += 100
        print('{token}-reached', total)
    """)
    res = strict.run(prog)
    assert res.verdict in (Verdict.FAILED, Verdict.MEMORY) and res.verdict is not Verdict.PASSED
    assert "No space left on device" in res.stderr or "Invalid argument" in res.stderr \
        or res.verdict is Verdict.MEMORY, res.stderr
    _assert_nothing_left(token, res.stdout)


@pytest.mark.parametrize("where", ["/tmp", "/var/tmp", "/run"])
def test_host_path_sockets_are_unreachable(strict, where):
    _needs(strict, "root")
    if not os.access(where, os.W_OK):
        pytest.skip(f"{where} is not writable here")
    token = _token()
    path = f"{where}/{token}.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    server.settimeout(0.1)
    try:
        res = strict.run(textwrap.dedent(f"""
            import socket
            s = socket.socket(socket.AF_UNIX)
            s.connect({path!r})
            print('{token}-reached')
        """))
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()
        os.unlink(path)
    assert res.verdict is Verdict.FAILED
    assert "FileNotFoundError" in res.stderr
    _assert_nothing_left(token, res.stdout)


def test_forked_children_share_one_memory_limit(strict):
    """Six children of 200 MB each under --memory-mb 256: the tree, not each process, is limited."""
    _needs(strict, "cgroup")
    token = _token()
    prog = _NAME_ME.format(token=token) + textwrap.dedent(f"""
        import os, time
        kids = []
        for _ in range(6):
            pid = os.fork()
            if pid == 0:
                block = b'\\x01' * (200 << 20)
                time.sleep(2)
                os._exit(0)
            kids.append(pid)
        ok = all(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) == 0 for p in kids)
        print('{token}-reached' if ok else 'killed')
        raise SystemExit(0 if ok else 3)
    """)
    res = strict.run(prog, timeout=20)
    assert res.verdict is Verdict.MEMORY, (res.verdict, res.detail, res.stderr[-500:])
    _assert_nothing_left(token, res.stdout)


def test_forked_children_share_one_memory_limit_without_the_fork_server():
    """The exec launch path (no fork server) joins a memory cgroup before exec: the same whole-tree limit."""
    with Sandbox(timeout=20, memory_mb=256, forkserver=False, workers=1) as sb:
        _needs(sb, "cgroup")
        token = _token()
        prog = _NAME_ME.format(token=token) + textwrap.dedent(f"""
            import os, time
            kids = []
            for _ in range(6):
                pid = os.fork()
                if pid == 0:
                    block = b'\\x01' * (200 << 20)
                    time.sleep(2)
                    os._exit(0)
                kids.append(pid)
            ok = all(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) == 0 for p in kids)
            print('{token}-reached' if ok else 'killed')
            raise SystemExit(0 if ok else 3)
        """)
        res = sb.run(prog)
    assert res.verdict is Verdict.MEMORY, (res.verdict, res.detail, res.stderr[-500:])
    _assert_nothing_left(token, res.stdout)


def test_shared_memory_counts_against_the_tree_limit(strict):
    """150 MB of System V shared memory, touched and detached (in no process's address space any more), plus
    150 MB of ordinary memory, under --memory-mb 256: each is under every per-process limit, together over."""
    _needs(strict, "cgroup")
    token = _token()
    prog = _NAME_ME.format(token=token) + _LIBC_IPC + textwrap.dedent(f"""
        sid = libc.shmget({_key(token)}, 150 << 20, IPC_CREAT | 0o600)
        if sid < 0: err('shmget')
        addr = libc.shmat(sid, None, 0)
        ctypes.memset(addr, 1, 150 << 20)
        libc.shmdt.argtypes = [ctypes.c_void_p]
        libc.shmdt(addr)
        block = b'\\x01' * (150 << 20)
        print('{token}-reached')
    """)
    res = strict.run(prog, timeout=20)
    assert res.verdict is Verdict.MEMORY, (res.verdict, res.detail, res.stderr[-300:])
    _assert_nothing_left(token, res.stdout)


def test_benchsmith_files_and_the_project_tree_are_invisible(strict):
    _needs(strict, "root")
    import benchsmith
    from benchsmith.runner import repo_root

    token = _token()
    pkg = Path(benchsmith.__file__).resolve().parent
    probes = [str(pkg / "__init__.py"), str(pkg / "data"), str(repo_root() / "pyproject.toml"),
              str(repo_root() / "tests"), str(Path(__file__).resolve())]
    prog = textwrap.dedent(f"""
        import os
        seen = [p for p in {probes!r} if os.path.exists(p)]
        try:
            import benchsmith
            seen.append('import benchsmith')
        except ImportError:
            pass
        print('{token}-reached' if seen else 'nothing', seen)
        raise SystemExit(0 if not seen else 5)
    """)
    res = strict.run(prog)
    assert res.verdict is Verdict.PASSED, res.stdout + res.stderr
    _assert_nothing_left(token, res.stdout)


def test_shared_reference_data_is_invisible(strict):
    _needs(strict, "root")
    from tests.shared_data import shared_data

    data = shared_data("humanextension/data.json")
    if not data.is_file():
        pytest.skip(f"no shared HumanExtension data at {data}")
    token = _token()
    res = strict.run(f"import os\nprint('{token}-reached' if os.path.exists({str(data)!r}) else 'hidden')\n")
    assert res.verdict is Verdict.PASSED and res.stdout.strip() == "hidden"
    _assert_nothing_left(token, res.stdout)


def test_paths_the_caller_hides_are_empty_inside_a_visible_tree(tmp_path):
    """A hidden directory under a tree the sandbox must show (/usr) is covered; without hiding it shows."""
    if os.geteuid() != 0 or not os.access("/usr/local/share", os.W_OK):
        pytest.skip("needs root to place a directory under /usr/local/share")
    import shutil

    token = _token()
    secret_dir = Path("/usr/local/share") / f"{token}-data"
    secret_dir.mkdir()
    (secret_dir / "answers.json").write_text('{"expected": 5040}')
    prog = f"import os\nprint(sorted(os.listdir({str(secret_dir)!r})))\n"
    try:
        with Sandbox(timeout=5, workers=1, hide=[secret_dir]) as hidden, Sandbox(timeout=5, workers=1) as shown:
            _needs(hidden, "root")
            inside, control = hidden.run(prog), shown.run(prog)
    finally:
        shutil.rmtree(secret_dir)
    assert inside.verdict is Verdict.PASSED and inside.stdout.strip() == "[]", inside.stderr
    assert control.stdout.strip() == "['answers.json']"  # the mechanism, not the path, is what hides it


def test_home_root_and_run_are_empty(strict):
    _needs(strict, "root")
    token = _token()
    res = strict.run(textwrap.dedent(f"""
        import os
        found = []
        for d in ('/home', '/run', '/srv', '/mnt', '/media', '/opt', '/sys'):
            if os.path.isdir(d) and os.listdir(d):
                found.append(d)
        if os.path.exists('/root/.bashrc') or os.path.exists('/root/.ssh'):
            found.append('/root')
        print('{token}-reached' if found else 'empty', found)
    """))
    assert res.verdict is Verdict.PASSED and res.stdout.startswith("empty"), res.stdout
    _assert_nothing_left(token, res.stdout)


def test_nothing_survives_a_run_that_leaves_daemons_files_and_ipc(strict):
    _needs(strict, "ipc")
    token = _token()
    prog = _NAME_ME.format(token=token) + _LIBC_IPC + _try_writes(token) + textwrap.dedent(f"""
        import time
        libc.shmget({_key(token)}, 4096, IPC_CREAT | 0o666)
        for _ in range(3):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(300)
                os._exit(0)
        open('/tmp/{token}-left', 'w').write('x')
    """)
    res = strict.run(prog)
    assert res.verdict is Verdict.PASSED, res.stderr
    _assert_nothing_left(token, res.stdout)
    after = strict.run(f"import os\nprint(sorted(n for n in os.listdir('/tmp') if '{token}' in n))\n")
    assert after.stdout.strip() == "[]"


# -------------------------------------------------------------------------------------------- forged verdicts

FACT_TESTS = ("def check(candidate):\n    assert candidate(7) == 5040\n    assert candidate(3) == 6\n\n"
              "def test_check():\n    check(factorial)\n\ntest_check()\n")
GOOD_FACT = "def factorial(n):\n    out = 1\n    for i in range(2, n + 1):\n        out *= i\n    return out\n"


def _judged(sandbox: Sandbox, source: str, tests: str = FACT_TESTS):
    from benchsmith.evaluate.humanext.judge import harness_program, judge, plan_tests

    plan = plan_tests(tests)
    res = sandbox.run(harness_program(source, plan))
    return judge(plan, res), res


def _channel_is_clean(res, token: str) -> None:
    """Only the harness's records are on the results channel: nothing the program wrote."""
    import json

    for line in res.stdout.splitlines():
        assert token not in line
        rec = json.loads(line)
        assert set(rec) <= {"i", "v", "error", "not_plain", "too_large", "fatal", "end", "at", "done", "violation"}


def test_judged_control_a_correct_program_passes(strict):
    j, res = _judged(strict, GOOD_FACT)
    assert j.verdict is Verdict.PASSED, j.detail


@pytest.mark.parametrize("name, source", [
    ("print marker and exit 0", "import os, sys\nprint('{token}-reached')\nsys.stdout.flush()\nos._exit(0)\n"),
    # what it writes on its own reply pipe is its answer (a program that knew 5040 could just return it); what
    # must not work is a claim of success without values: a fake end record, a verdict, the harness's keys
    ("fake end records on every descriptor then exit", textwrap.dedent("""
        import json, os
        fake = b''.join(json.dumps(r).encode() + b'\\n' for r in ({{"done": 2}}, {{"verdict": "passed"}},
                                                                 {{"i": 5, "v": 1}}, {{"end": "ok", "at": 2}}))
        for fd in range(0, 64):
            try:
                os.write(fd, fake + b'{token}-reached\\n')
            except OSError:
                pass
        os._exit(0)
    """)),
    ("atexit prints fake records", textwrap.dedent("""
        import atexit
        atexit.register(lambda: print('{{"i": 0, "v": 5040}}\\n{{"i": 1, "v": 6}}\\n{{"done": 2}}\\n{token}-reached'))
        def factorial(n):
            return 0
    """)),
    ("exits early inside the call", "import sys\ndef factorial(n):\n    print('{token}-reached')\n    sys.exit(0)\n"),
    ("int subclass equal to everything", textwrap.dedent("""
        class Liar(int):
            def __eq__(self, other):
                return True
            __hash__ = int.__hash__
        def factorial(n):
            return Liar(0)
    """)),
    ("object equal to everything", textwrap.dedent("""
        class Any:
            def __eq__(self, other):
                return True
        def factorial(n):
            return Any()
    """)),
    ("kills the harness after faking", textwrap.dedent("""
        import os, signal
        def factorial(n):
            os.write(1, b'{{"i": 0, "v": 5040}}\\n{token}-reached\\n')
            os.kill(os.getppid(), signal.SIGKILL)
            return 5040
    """)),
    ("opens the harness's results channel through /proc", textwrap.dedent("""
        import os
        def factorial(n):
            fd = os.open('/proc/%d/fd/1' % os.getppid(), os.O_WRONLY)
            os.write(fd, b'{{"i": 0, "v": 5040}}\\n{{"i": 1, "v": 6}}\\n{{"done": 2}}\\n{token}-reached\\n')
            os._exit(0)
    """)),
    ("patches builtins the comparison might use", textwrap.dedent("""
        import builtins
        builtins.int.__eq__ if False else None
        class AlwaysEq(list):
            pass
        builtins.list = AlwaysEq
        builtins.round = lambda *a: 5040
        def factorial(n):
            print('{token}-reached')
            return None
    """)),
])
def test_forged_verdicts_fail(strict, name, source):
    token = _token()
    j, res = _judged(strict, _NAME_ME.format(token=token) + source.format(token=token))
    assert j.verdict is Verdict.FAILED, (name, j.verdict, j.detail, res.stderr[-500:])
    if "/proc" in name:  # refused outright: the harness is not dumpable (hidepid even hides it)
        assert j.error.startswith(("PermissionError", "FileNotFoundError")), j.detail
    _channel_is_clean(res, token)
    _assert_nothing_left(token)


def test_expected_values_are_not_in_the_programs_reach(strict):
    """The candidate searches its own file, its frames' constants and every object in memory for the expected
    value; it is in none of them, so it can only compute it (here: it gives up and returns 0)."""
    token = _token()
    source = _NAME_ME.format(token=token) + textwrap.dedent("""
        import gc, sys
        def factorial(n):
            if n != 7:  # later calls could find its own earlier answers in the harness's locals
                return 6
            hay = [open(__file__).read()]
            f = sys._getframe().f_back  # not our own locals: they hold the needle once it is made
            while f is not None:
                hay += [repr(c) for c in f.f_code.co_consts]
                hay.append(repr(f.f_locals)[:100000])
                f = f.f_back
            for obj in gc.get_objects():
                try:
                    hay.append(repr(obj)[:10000])
                except Exception:
                    pass
            import re
            # the assertion's text, or the number on its own (not inside an address); never a constant here:
            # this code is in the haystack too
            number = str(int('50') * 100 + 40)
            needles = [re.compile(r'candidate\\(7\\)\\s*==\\s*(\\d+)'),
                       re.compile(r'(?<![0-9a-fA-Fx])(' + number + r')(?![0-9a-fA-F])')]
            for s in hay:
                for needle in needles:
                    m = needle.search(s)
                    if m:
                        return int(m.group(1))
            return 0
    """)
    j, res = _judged(strict, source)
    assert j.verdict is Verdict.FAILED and j.returned == "0", (j.detail, res.stderr[-500:])
    # the search itself works: with the tests in the program, as before, it finds the answer and passes
    leaky = strict.run(source + "\n" + FACT_TESTS.replace("candidate(3) == 6", "candidate(3) in (0, 6)"))
    assert leaky.verdict is Verdict.PASSED, leaky.stderr[-500:]
    _channel_is_clean(res, token)
    _assert_nothing_left(token)


def test_reading_the_variants_and_references_cannot_pass(strict, tmp_path):
    """A program that looks for the tests/reference files it was built from finds nothing: they are hidden."""
    _needs(strict, "root")
    token = _token()
    variants = tmp_path / "variants.jsonl"
    variants.write_text('{"tests": "assert candidate(7) == 5040"}\n')
    source = textwrap.dedent(f"""
        import os
        def factorial(n):
            for p in ({str(variants)!r}, '/work/shared/data/humanextension/data.json'):
                try:
                    if '5040' in open(p).read():
                        return 5040 if n == 7 else 6
                except OSError:
                    pass
            return -1
    """)
    with Sandbox(timeout=5, workers=1, hide=[tmp_path]) as sb:
        j, res = _judged(sb, _NAME_ME.format(token=token) + source)
    assert j.verdict is Verdict.FAILED and j.returned == "-1", j.detail
    _assert_nothing_left(token)
